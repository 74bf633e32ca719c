//go:build ksa_nopkcs11 || ksa_noawskms || ksa_nocloudkms || ksa_noazurekms

package keystores

import "github.com/ksa-go/ksa/keystore"

// tagged is the store a build tag left out.
func tagged(scheme keystore.Scheme, tag string) missing {
	return missing{what: "this ksa was built without " + string(scheme) + " support", fix: "rebuild it without -tags " + tag}
}
