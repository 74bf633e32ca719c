package keystore

import (
	"context"
	"crypto"

	"github.com/ksa-go/ksa/internal/errs"
)

// Opener opens the signing key a reference names: a PEM file path, or a
// key in a key store (an HSM or a KMS, named by URI; see [ParseRef]). A
// program holds one Opener and passes it to what needs keys (an external
// signer's ring file, a CA), so that the key stores it links are its own
// choice: the library links none.
//
// Open's errors match [ErrInvalidRef] (a *[RefError]: the reference is
// refused before any store is asked), [ErrUnsupportedStore] (the Opener
// cannot open keys of that scheme), [ErrKeyStore] (the store failed or
// refused; the error wraps the store's) or, for a file, those of
// [LoadSigningKeyFile]. They name the key by [Ref.String], never by a
// secret.
type Opener interface {
	Open(ctx context.Context, ref string) (crypto.Signer, error)
}

// OpenerFunc adapts a function to [Opener].
type OpenerFunc func(ctx context.Context, ref string) (crypto.Signer, error)

// Open calls f.
func (f OpenerFunc) Open(ctx context.Context, ref string) (crypto.Signer, error) { return f(ctx, ref) }

// Files opens references that are PEM file paths, with
// [LoadSigningKeyFile]; a key-store URI is an error matching
// [ErrUnsupportedStore], and a reference [ParseRef] refuses, its
// *[RefError]. Its zero value is ready.
type Files struct{}

// Open reads the private key of the PEM file at path.
func (Files) Open(_ context.Context, path string) (crypto.Signer, error) {
	ref, err := ParseRef(path)
	if err != nil {
		return nil, err
	}
	if ref.Scheme() != SchemeFile {
		return nil, errs.Wrap(prefix, ErrUnsupportedStore, ref.String()+" names a key in "+string(ref.Scheme())+", and this program opens PEM key files only", nil)
	}
	return LoadSigningKeyFile(path)
}
