package keystores

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

// TestStoresFiles: every build opens PEM files, and refuses to create
// one (ksa issuer keygen writes files itself).
func TestStoresFiles(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "sa.key")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	var s Stores
	defer s.Close()
	var opener keystore.Opener = &s
	signer, err := opener.Open(t.Context(), path)
	require.NoError(t, err)
	assert.True(t, key.PublicKey.Equal(signer.Public()))
	_, err = s.Open(t.Context(), filepath.Join(t.TempDir(), "missing.key"))
	require.ErrorIs(t, err, keystore.ErrKeyFile)
	_, err = s.Create(t.Context(), path, keystore.KeySpec{})
	storeErr(t, err, keystore.ErrUnsupportedStore, "is a file")
	for _, ref := range []string{"pkcs11:token=ksa;id=01?pin-value=4321", "awskms:key-id=alias/sa", "pkcs12:x"} {
		_, err := s.Open(t.Context(), ref)
		require.ErrorIs(t, err, keystore.ErrInvalidRef, ref)
		assert.NotContains(t, err.Error(), "4321")
	}
}
