package keystores

import (
	"context"
	"crypto"
	"sync"

	"github.com/ksa-go/ksa/keystore"
)

// Stores opens keys by reference (a keystore.Opener) and creates keys in
// key stores (a keystore.Creator): a keystore.Openers over the stores this
// build links, made on first use, one Store per backend for the whole
// command (so that a token is logged in to once, and a second PIN for it
// refused). Its zero value is ready; it is safe for concurrent use.
type Stores struct {
	once    sync.Once
	openers keystore.Openers
}

// get returns the Openers, made the first time.
func (s *Stores) get() keystore.Openers {
	s.once.Do(func() {
		s.openers = keystore.Openers{PKCS11: pkcs11Store(), AWSKMS: awskmsStore(), CloudKMS: cloudkmsStore(), AzureKMS: azurekmsStore()}
	})
	return s.openers
}

// Open opens the key ref names: a PEM file, or a key in a key store.
func (s *Stores) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	return s.get().Open(ctx, ref)
}

// Create makes a key of spec in the key store ref names.
func (s *Stores) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return s.get().Create(ctx, ref, spec)
}

// Close closes the stores; keys opened through them stop signing.
func (s *Stores) Close() error { return s.get().Close() }
