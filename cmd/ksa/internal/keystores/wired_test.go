//go:build cgo && !ksa_nopkcs11 && !ksa_noawskms && !ksa_nocloudkms && !ksa_noazurekms

package keystores

import (
	"crypto/elliptic"
	"path/filepath"
	"testing"

	"github.com/ksa-go/ksa/keystore"
)

// TestStoresWired: the default build gives each scheme to its store in the
// library: each answers as only it does, before any network call.
func TestStoresWired(t *testing.T) {
	var s Stores
	defer s.Close()
	_, err := s.Open(t.Context(), "pkcs11:token=ksa;id=01?pin-source="+filepath.Join(t.TempDir(), "missing-pin"))
	storeErr(t, err, keystore.ErrKeyStore, "its PIN cannot be read")
	for _, tt := range []struct {
		ref  string
		spec keystore.KeySpec
		want string
	}{
		{ref: "awskms:name=sa", spec: keystore.KeySpec{RSA: true, Bits: 2560}, want: "AWS KMS does not make RSA 2560 keys"},
		{ref: "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k", spec: keystore.KeySpec{Curve: elliptic.P521()}, want: "Google Cloud KMS does not make ECDSA P-521 keys"},
		{ref: "azurekms:name=sa;vault=my-vault", spec: keystore.KeySpec{RSA: true, Bits: 8192}, want: "Azure Key Vault does not make RSA 8192 keys"},
	} {
		_, err := s.Create(t.Context(), tt.ref, tt.spec)
		storeErr(t, err, keystore.ErrKeyStore, tt.want)
	}
}
