//go:build cgo

package pkcs11

import (
	"errors"
	"fmt"
	"strings"

	"go.step.sm/crypto/kms/apiv1"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// openError explains why a token cannot be opened.
func openError(r keystore.Ref, err error) *keystore.StoreError {
	msg := err.Error()
	kind, value := selector(r)
	e := stepkms.StoreError(r, "the token cannot be opened", "check the reference, and that the token is present", err)
	switch {
	case strings.Contains(msg, "CKR_PIN_INCORRECT"):
		e.What, e.Detail, e.Fix, e.Kind = "the token refused the PIN", "CKR_PIN_INCORRECT", "check the PIN pin-source gives", keystore.ErrLoginRefused
	case strings.Contains(msg, "CKR_PIN_LOCKED"):
		e.What, e.Detail, e.Fix, e.Kind = "the token's PIN is locked", "CKR_PIN_LOCKED", "unlock it with the security officer's PIN (softhsm2-util or pkcs11-tool --init-pin)", keystore.ErrLoginRefused
	case strings.Contains(msg, "CKR_PIN_"):
		e.What, e.Fix, e.Kind = "the token refused the PIN", "check the PIN pin-source gives", keystore.ErrLoginRefused
	case strings.Contains(msg, "could not find PKCS#11 token"):
		e.What, e.Detail = fmt.Sprintf("module %s has no token with %s %s", moduleName(r), kind, value), ""
		e.Fix = "check " + kind + "= (softhsm2-util --show-slots, or pkcs11-tool --module MODULE --list-slots, lists the tokens)"
	case strings.Contains(msg, "failed to create module context"), strings.Contains(msg, "failed to open module"):
		e.What, e.Detail = "the PKCS #11 module "+moduleName(r)+" cannot be loaded", ""
		e.Fix = "give module-path=, the path of the HSM's PKCS #11 library (SoftHSM2's is /usr/lib/softhsm/libsofthsm2.so)"
	}
	return e
}

// keyError explains why a key cannot be found or made.
func keyError(r keystore.Ref, err error) *keystore.StoreError {
	_, token := selector(r)
	switch {
	case errors.Is(err, apiv1.NotFoundError{}) || strings.Contains(err.Error(), "was not found"):
		e := stepkms.StoreError(r, fmt.Sprintf("token %s holds no key pair with %s", token, keyWords(r)),
			"check id= and object= (pkcs11-tool --list-objects --type privkey lists the keys), or create the key with ksa issuer keygen --out REFERENCE", err)
		e.Detail = ""
		return e
	case errors.Is(err, apiv1.AlreadyExistsError{}):
		e := stepkms.StoreError(r, fmt.Sprintf("token %s holds a key with %s already", token, keyWords(r)),
			"choose another id and object (keys are never replaced)", err)
		e.Detail = ""
		return e
	}
	return stepkms.StoreError(r, "the key cannot be used", "check the token's objects (pkcs11-tool --list-objects)", err)
}
