//go:build !cgo && !ksa_nopkcs11

package keystores

import "github.com/ksa-go/ksa/keystore"

// pkcs11Store refuses PKCS #11: a build without cgo cannot load a module.
func pkcs11Store() keystore.Opener {
	return missing{what: "this ksa was built without cgo, which PKCS #11 needs", fix: "rebuild ksa with CGO_ENABLED=1 and a C compiler"}
}
