//go:build cgo

package pkcs11_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/pkcs11"
)

// A program keeping PINs elsewhere than files and the environment (a
// Kubernetes Secret it reads) answers them by the reference's pin-source.
// A PIN it does not have stops the open before any token is asked.
func ExampleNewStore() {
	pins := map[string]string{"secret:hsm-pin": "1234"}
	store, err := pkcs11.NewStore(pkcs11.Config{ReadPIN: func(r keystore.Ref) (string, error) {
		pin, ok := pins[r.Attr("pin-source")]
		if !ok {
			return "", errors.New("no Secret holds the PIN")
		}
		return pin, nil
	}})
	if err != nil {
		panic(err)
	}
	keys := keystore.Openers{PKCS11: store}
	defer keys.Close()

	_, err = keys.Open(context.Background(), "pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a0b?pin-source=secret:other")
	var e *keystore.StoreError
	fmt.Println(errors.As(err, &e), errors.Is(err, keystore.ErrKeyStore))
	fmt.Println(e.What + ": " + e.Detail)
	// Output:
	// true true
	// its PIN cannot be read: no Secret holds the PIN
}
