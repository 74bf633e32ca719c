package capiflow

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ksa-go/ksa/keystore"
)

// PKCS11KeyRef returns a Config.NewKeyRef for keys on a PKCS #11 token:
// the reference of the key named name has the module, the token and the
// PIN file given (%-encoded), name as its CKA_LABEL (object) and the first
// 8 bytes of name's SHA-256 as its CKA_ID (id), both of which creating a
// key needs. An empty module leaves the module to the key store's
// configuration. A reference keystore.ParseNewKeyRef refuses (an empty
// token or PIN file) is the error, a *keystore.RefError.
func PKCS11KeyRef(module, token, pinFile string) (func(name string) string, error) {
	// A template with every attribute, set through Ref.With.
	tmpl, err := keystore.ParseNewKeyRef("pkcs11:module-path=m;token=t;id=00;object=o?pin-source=p")
	if err != nil {
		return nil, err
	}
	base := tmpl.With("module-path", module).With("token", token).With("pin-source", pinFile)
	ref := func(name string) string {
		sum := sha256.Sum256([]byte(name))
		return base.With("id", hex.EncodeToString(sum[:8])).With("object", name).String()
	}
	if _, err := keystore.ParseNewKeyRef(ref("cluster-1-sa-20260131000000")); err != nil {
		return nil, err
	}
	return ref, nil
}
