package keystoretest_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// TestSoftHSM: a token of the test's own, a key imported, the reference
// the opener gets well formed, the PIN in its file.
func TestSoftHSM(t *testing.T) {
	hsm := keystoretest.StartSoftHSM(t)
	assert.Equal(t, hsm.Conf, os.Getenv("SOFTHSM2_CONF"))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(key, "0a0b", "sa"))
	require.Error(t, hsm.Import(key, "not-hex", "sa"))

	ref, err := keystore.ParseRef(hsm.Ref("0a0b", "sa"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0x0a, 0x0b}, ref.ObjectID())
	pin, err := ref.ReadPIN()
	require.NoError(t, err)
	assert.Equal(t, hsm.PIN, pin)
	assert.Len(t, pin, 8)

	out, err := exec.Command("softhsm2-util", "--show-slots").CombinedOutput()
	require.NoError(t, err)
	assert.Contains(t, string(out), "Label:            ksa")
}

// TestLocalKMS: local-kms answers the AWS KMS API on its endpoint, and
// stops when the test ends.
func TestLocalKMS(t *testing.T) {
	kms := keystoretest.StartLocalKMS(t)
	assert.True(t, strings.HasPrefix(kms.Endpoint, "http://127.0.0.1:"), kms.Endpoint)
	assert.Equal(t, kms.Endpoint, os.Getenv("AWS_ENDPOINT_URL_KMS"))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, kms.Endpoint, strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "TrentService.ListKeys")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	other, err := keystoretest.NewLocalKMS(t.TempDir())
	require.NoError(t, err)
	other.Close()
	_, err = http.Post(other.Endpoint, "application/x-amz-json-1.1", strings.NewReader("{}"))
	require.Error(t, err, "stopped")
	log, err := os.ReadFile(other.Log)
	require.NoError(t, err)
	assert.Contains(t, string(log), "Local KMS started on")
}
