//go:build !cgo

package pkcs11

import (
	"context"
	"crypto"

	"github.com/ksa-go/ksa/keystore"
)

// tokens holds no tokens: PKCS #11 needs cgo.
type tokens struct{}

func (*tokens) close() error { return nil }

// noCgo refuses r: this build has no cgo, which loading a PKCS #11
// module needs.
func noCgo(r keystore.Ref) error {
	return &keystore.StoreError{Ref: r.String(), What: "this program was built without cgo, which PKCS #11 needs",
		Fix: "build it with CGO_ENABLED=1 and a C compiler", Kind: keystore.ErrUnsupportedStore}
}

func (s *Store) open(_ context.Context, r keystore.Ref) (crypto.Signer, error) {
	return nil, noCgo(r)
}

func (s *Store) create(_ context.Context, r keystore.Ref, _ keystore.KeySpec) (keystore.Created, error) {
	return keystore.Created{}, noCgo(r)
}
