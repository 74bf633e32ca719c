package keystore

import (
	"context"
	"crypto"
)

// Opener opens the signing key a reference names: a PEM file path, or a
// key in a key store (an HSM or a KMS, named by URI). A program holds one
// Opener and passes it to what needs keys (an external signer's ring file,
// a CA), so that the key stores it links are its own choice: the library
// links none.
type Opener interface {
	Open(ctx context.Context, ref string) (crypto.Signer, error)
}

// OpenerFunc adapts a function to [Opener].
type OpenerFunc func(ctx context.Context, ref string) (crypto.Signer, error)

// Open calls f.
func (f OpenerFunc) Open(ctx context.Context, ref string) (crypto.Signer, error) { return f(ctx, ref) }

// Files opens references that are PEM file paths, with
// [LoadSigningKeyFile]. Its zero value is ready.
type Files struct{}

// Open reads the private key of the PEM file at path.
func (Files) Open(_ context.Context, path string) (crypto.Signer, error) {
	return LoadSigningKeyFile(path)
}
