//go:build !cgo || ksa_nopkcs11 || ksa_noawskms || ksa_nocloudkms || ksa_noazurekms

package keystores

import (
	"context"
	"crypto"

	"github.com/ksa-go/ksa/keystore"
)

// missing refuses the references of a key store this build leaves out,
// saying how to get it back.
type missing struct{ what, fix string }

func (m missing) Open(_ context.Context, ref string) (crypto.Signer, error) {
	r, err := keystore.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	return nil, m.refuse(r)
}

func (m missing) Create(_ context.Context, ref string, _ keystore.KeySpec) (keystore.Created, error) {
	r, err := keystore.ParseNewKeyRef(ref)
	if err != nil {
		return keystore.Created{}, err
	}
	return keystore.Created{}, m.refuse(r)
}

func (m missing) refuse(r keystore.Ref) error {
	return &keystore.StoreError{Ref: r.String(), What: m.what, Fix: m.fix, Kind: keystore.ErrUnsupportedStore}
}
