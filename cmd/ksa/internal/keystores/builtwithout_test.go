//go:build ksa_nopkcs11 && ksa_noawskms && ksa_nocloudkms && ksa_noazurekms

package keystores

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

// TestBuiltWithout: a ksa built with every key-store tag opens files, and
// says of each key store how to get it back. The main package's
// TestBuildTags runs it.
func TestBuiltWithout(t *testing.T) {
	var s Stores
	for _, tt := range []struct{ ref, create, tag string }{
		{"pkcs11:token=ksa;id=01?pin-source=/p", "pkcs11:token=ksa;id=01;object=sa?pin-source=/p", "ksa_nopkcs11"},
		{"awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab", "awskms:name=sa", "ksa_noawskms"},
		{"cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1", "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k", "ksa_nocloudkms"},
		{"azurekms:name=sa;vault=my-vault", "azurekms:name=sa;vault=my-vault", "ksa_noazurekms"},
	} {
		_, err := s.Open(t.Context(), tt.ref)
		e := storeErr(t, err, keystore.ErrUnsupportedStore, "this ksa was built without")
		assert.Equal(t, "rebuild it without -tags "+tt.tag, e.Fix)
		_, err = s.Create(t.Context(), tt.create, keystore.KeySpec{})
		e = storeErr(t, err, keystore.ErrUnsupportedStore, "this ksa was built without")
		assert.Equal(t, "rebuild it without -tags "+tt.tag, e.Fix)
	}
	require.NoError(t, s.Close())
}
