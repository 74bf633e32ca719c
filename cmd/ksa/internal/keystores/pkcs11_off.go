//go:build !cgo || ksa_nopkcs11

package keystores

import (
	"context"
	"crypto"
	"errors"

	"github.com/ksa-go/ksa/keystore"
)

// tokenSet holds no tokens: this build has no PKCS #11.
type tokenSet struct{}

func (*tokenSet) close() error { return nil }

// openPKCS11 is never called: Stores.check refuses pkcs11 references first.
func (s *Stores) openPKCS11(context.Context, keystore.Ref) (crypto.Signer, error) {
	return nil, errors.ErrUnsupported
}

// createPKCS11 is never called: Stores.check refuses pkcs11 references first.
func (s *Stores) createPKCS11(context.Context, keystore.Ref, KeySpec) (Created, error) {
	return Created{}, errors.ErrUnsupported
}
