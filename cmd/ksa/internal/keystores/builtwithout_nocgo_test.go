//go:build !cgo && !ksa_nopkcs11

package keystores

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/keystore"
)

// TestBuiltWithoutCgo: a ksa built without cgo says PKCS #11 needs it.
// The main package's TestBuildTags runs it.
func TestBuiltWithoutCgo(t *testing.T) {
	_, err := (&Stores{}).Open(t.Context(), "pkcs11:token=ksa;id=01?pin-source=/p")
	e := storeErr(t, err, keystore.ErrUnsupportedStore, "this ksa was built without cgo, which PKCS #11 needs")
	assert.Equal(t, "rebuild ksa with CGO_ENABLED=1 and a C compiler", e.Fix)
}
