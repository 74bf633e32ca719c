//go:build ksa_nopkcs11

package keystores

import "github.com/ksa-go/ksa/keystore"

// pkcs11Store refuses PKCS #11: ksa_nopkcs11 left it out.
func pkcs11Store() keystore.Opener { return tagged(keystore.SchemePKCS11, "ksa_nopkcs11") }
