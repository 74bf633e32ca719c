//go:build cgo && !ksa_nopkcs11

package keystores

import (
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/pkcs11"
)

// pkcs11Store is the command's one PKCS #11 store.
func pkcs11Store() keystore.Opener { return &pkcs11.Store{} }
