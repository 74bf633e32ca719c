//go:build !cgo

package pkcs11_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
	"github.com/ksa-go/ksa/keystore/pkcs11"
)

// TestNoCgo: built without cgo, the package refuses every reference,
// saying that PKCS #11 needs cgo.
func TestNoCgo(t *testing.T) {
	s := &pkcs11.Store{}
	defer s.Close()
	_, err := s.Open(t.Context(), "pkcs11:token=ksa;id=01?pin-source=/p")
	e := storetest.StoreErr(t, err, keystore.ErrUnsupportedStore, "this program was built without cgo, which PKCS #11 needs")
	assert.Equal(t, "build it with CGO_ENABLED=1 and a C compiler", e.Fix)
	_, err = s.Create(t.Context(), "pkcs11:token=ksa;id=01;object=sa?pin-source=/p", keystore.KeySpec{})
	storetest.StoreErr(t, err, keystore.ErrUnsupportedStore, "built without cgo")
}
