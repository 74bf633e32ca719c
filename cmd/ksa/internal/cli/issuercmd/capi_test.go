package issuercmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/keystore"
)

// TestCAPISecretIsTheLibrarys: the manifest, YAML or JSON, on standard
// output or in a file (mode 0600), is the Secret clusterapi.NewSecret
// renders for the keys, and reads back to them.
func TestCAPISecretIsTheLibrarys(t *testing.T) {
	keys, err := filepath.Abs("../../../testdata/keys")
	require.NoError(t, err)
	signer, err := keystore.LoadSigningKeyFile(filepath.Join(keys, "ec.key"))
	require.NoError(t, err)
	previous, err := keystore.LoadPublicKeysFile(filepath.Join(keys, "rsa.pub"))
	require.NoError(t, err)
	want, err := clusterapi.NewSecret("cluster-1", signer, clusterapi.SecretOptions{Namespace: "fleet", VerifyKeys: previous})
	require.NoError(t, err)

	args := []string{"issuer", "capi-secret", "--cluster", "cluster-1", "--namespace", "fleet",
		"--key", filepath.Join(keys, "ec.key"), "--key", filepath.Join(keys, "rsa.pub")}
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := runKSA(t, t.TempDir(), append(args, "-o", format)...)
			require.Equal(t, base.ExitOK, code, stderr)
			var got corev1.Secret
			if format == "json" {
				require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			} else {
				require.NoError(t, yaml.UnmarshalStrict([]byte(stdout), &got))
			}
			assert.Equal(t, *want, got)
		})
	}

	dir := t.TempDir()
	code, stdout, stderr := runKSA(t, dir, append(args, "--out", "s.yaml")...)
	require.Equal(t, base.ExitOK, code, stderr)
	assert.Contains(t, stdout, "wrote s.yaml (mode 0600: it holds the private key): Secret fleet/cluster-1-sa\n")
	st, err := os.Stat(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	data, err := os.ReadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	var got corev1.Secret
	require.NoError(t, yaml.UnmarshalStrict(data, &got))
	assert.Equal(t, *want, got)
	pair, err := clusterapi.ReadSecret(&got)
	require.NoError(t, err)
	assert.Len(t, pair.Keys, 2)
	clitest.AssertNoTempFiles(t, dir)
}

// TestCAPISecretErrors: a bad name is a usage error, a bad key a failure;
// each is one line ending with a fix in the command's words, and a key
// store's PIN never shows.
func TestCAPISecretErrors(t *testing.T) {
	keys, err := filepath.Abs("../../../testdata/keys")
	require.NoError(t, err)
	rsaKey := filepath.Join(keys, "rsa.key")
	for _, tc := range []struct {
		name string
		args []string
		code int
		fix  string
	}{
		{name: "bad cluster name", args: []string{"--cluster", "Cluster-1", "--key", rsaKey}, code: base.ExitUsage, fix: "Cluster object"},
		{name: "cluster name over 63 characters", args: []string{"--cluster", strings.Repeat("c", 64), "--key", rsaKey}, code: base.ExitUsage, fix: "Cluster object"},
		{name: "bad namespace", args: []string{"--cluster", "c1", "--namespace", "Fleet", "--key", rsaKey}, code: base.ExitUsage, fix: "namespace"},
		{name: "no private key", args: []string{"--cluster", "c1", "--key", filepath.Join(keys, "rsa.pub")}, code: base.ExitFailure, fix: "private key file"},
		{name: "key in an HSM", args: []string{"--cluster", "c1", "--key", "pkcs11:token=ksa;id=01;object=sa?pin-source=/run/pin"}, code: base.ExitFailure, fix: "PEM key file"},
		{name: "signing key in a KMS", args: []string{"--cluster", "c1", "--key", rsaKey, "--signing-key", "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1"}, code: base.ExitFailure, fix: "ksa signer serve"},
		{name: "a PIN in the reference", args: []string{"--cluster", "c1", "--key", "pkcs11:token=ksa;id=01?pin-value=4321"}, code: base.ExitUsage, fix: "pin-source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runKSA(t, t.TempDir(), append([]string{"issuer", "capi-secret"}, tc.args...)...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			_, fix, ok := strings.Cut(stderr, "; fix: ")
			require.True(t, ok, "no fix: %q", stderr)
			assert.Contains(t, fix, tc.fix, stderr)
			assert.NotContains(t, stderr, "4321")
			clitest.AssertUserWords(t, stderr)
		})
	}
}
