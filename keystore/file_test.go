package keystore_test

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

func TestLoadPublicKeysFile(t *testing.T) {
	path := writeFile(t, "sa.pub", concat(testkeys.PEM("k8s-rsa.pub.pem"), testkeys.PEM("k8s-ec.key.pem")))
	keys, err := keystore.LoadPublicKeysFile(path)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	for i, want := range []string{testkeys.K8sRSAKeyID, testkeys.K8sECKeyID} {
		kid, err := jwks.KeyID(keys[i])
		require.NoError(t, err)
		assert.Equal(t, want, kid)
	}

	t.Run("exactly MaxPEMFileBytes", func(t *testing.T) {
		path := writeFile(t, "big.pem", padTo(testkeys.PEM("k8s-rsa.pub.pem"), keystore.MaxPEMFileBytes))
		keys, err := keystore.LoadPublicKeysFile(path)
		require.NoError(t, err)
		assert.Len(t, keys, 1)
	})
	t.Run("MaxPEMFileBytes+1", func(t *testing.T) {
		path := writeFile(t, "big.pem", padTo(testkeys.PEM("k8s-rsa.pub.pem"), keystore.MaxPEMFileBytes+1))
		_, err := keystore.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: -1}
		tt.check(t, err)
		assert.Contains(t, err.Error(), path)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := keystore.LoadPublicKeysFile(filepath.Join(t.TempDir(), "missing.pem"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("directory", func(t *testing.T) {
		_, err := keystore.LoadPublicKeysFile(t.TempDir())
		require.Error(t, err)
	})
	t.Run("no keys names the file", func(t *testing.T) {
		path := writeFile(t, "empty.pem", []byte(ecParamsPEM))
		_, err := keystore.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrNoKeys, wantBlock: -1}
		tt.check(t, err)
		assert.Contains(t, err.Error(), path)
	})
	t.Run("corrupt block names the file", func(t *testing.T) {
		path := writeFile(t, "bad.pem", pemBlock("PUBLIC KEY", []byte("garbage")))
		_, err := keystore.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY"}
		tt.check(t, err)
		assert.Contains(t, err.Error(), path)
	})
}

func TestLoadSigningKeyFile(t *testing.T) {
	path := writeFile(t, "sa.key", testkeys.PEM("k8s-rsa.key.pem"))
	signer, err := keystore.LoadSigningKeyFile(path)
	require.NoError(t, err)
	kid, err := jwks.KeyID(signer)
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sRSAKeyID, kid)

	t.Run("exactly MaxPEMFileBytes", func(t *testing.T) {
		path := writeFile(t, "big.key", padTo(testkeys.PEM("k8s-ec.key.pem"), keystore.MaxPEMFileBytes))
		signer, err := keystore.LoadSigningKeyFile(path)
		require.NoError(t, err)
		assert.True(t, testkeys.K8sEC().PublicKey.Equal(signer.Public()))
	})
	t.Run("MaxPEMFileBytes+1", func(t *testing.T) {
		path := writeFile(t, "big.key", padTo(testkeys.PEM("k8s-ec.key.pem"), keystore.MaxPEMFileBytes+1))
		_, err := keystore.LoadSigningKeyFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: -1}
		tt.check(t, err)
		assert.Contains(t, err.Error(), path)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := keystore.LoadSigningKeyFile(filepath.Join(t.TempDir(), "missing.key"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("public key file", func(t *testing.T) {
		path := writeFile(t, "sa.pub", testkeys.PEM("k8s-rsa.pub.pem"))
		_, err := keystore.LoadSigningKeyFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrNoKeys, wantBlock: -1}
		tt.check(t, err)
		assert.Contains(t, err.Error(), path)
	})
}

// TestLoadKeyFileUnreadable: a file that cannot be opened is a typed error
// matching ErrKeyFile and the cause.
func TestLoadKeyFileUnreadable(t *testing.T) {
	_, err := keystore.LoadPublicKeysFile(filepath.Join(t.TempDir(), "missing.pem"))
	require.ErrorIs(t, err, keystore.ErrKeyFile)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = keystore.LoadSigningKeyFile(filepath.Join(t.TempDir(), "missing.pem"))
	require.ErrorIs(t, err, keystore.ErrKeyFile)
}

// TestFilesOpen: Files opens PEM files only, and says so of a key-store
// URI instead of looking for a file of that name.
func TestFilesOpen(t *testing.T) {
	path := writeFile(t, "sa.key", testkeys.PEM("k8s-ec.key.pem"))
	signer, err := keystore.Files{}.Open(t.Context(), path)
	require.NoError(t, err)
	assert.True(t, testkeys.K8sEC().PublicKey.Equal(signer.Public()))

	_, err = keystore.Files{}.Open(t.Context(), "pkcs11:token=ksa;id=01?pin-source=/p")
	require.ErrorIs(t, err, keystore.ErrUnsupportedStore)
	require.NotErrorIs(t, err, keystore.ErrKeyFile)
	assert.Contains(t, err.Error(), "pkcs11:token=ksa;id=01?pin-source=/p")

	_, err = keystore.Files{}.Open(t.Context(), "pkcs11:token=ksa;id=01?pin-value=4321")
	require.ErrorIs(t, err, keystore.ErrInvalidRef)
	assert.NotContains(t, err.Error(), "4321")
}
