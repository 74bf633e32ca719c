package signercmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/issuercmd"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// keygenStore runs ksa issuer keygen for a key in a key store and returns
// its result.
func keygenStore(t *testing.T, dir, out string, args ...string) issuercmd.KeygenResult {
	t.Helper()
	code, stdout, stderr := clitest.Run(t, dir, func(a *base.App) *cobra.Command { return issuercmd.New(a, nil) }, append([]string{"issuer", "keygen", "--out", out, "--public-out", "sa.pub", "-o", "json"}, args...)...)
	require.Equal(t, base.ExitOK, code, stderr)
	var res issuercmd.KeygenResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	return res
}

// TestSignerServeKeyStores: ksa issuer keygen makes a key in SoftHSM2 and
// in local-kms (as AWS KMS), and ksa signer serve signs with it: the
// conformance harness passes every check over the socket, and FetchKeys
// publishes the public key keygen wrote.
func TestSignerServeKeyStores(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  func(t *testing.T, dir string) issuercmd.KeygenResult
	}{
		{name: "SoftHSM2, ECDSA P-256", key: func(t *testing.T, dir string) issuercmd.KeygenResult {
			hsm := keystoretest.StartSoftHSM(t)
			res := keygenStore(t, dir, hsm.Ref("0a01", "sa"), "--type", "ecdsa")
			assert.Equal(t, hsm.Ref("0a01", "sa"), res.KeyRef, "the reference as given, pin-source and all")
			return res
		}},
		{name: "SoftHSM2, RSA 2048", key: func(t *testing.T, dir string) issuercmd.KeygenResult {
			hsm := keystoretest.StartSoftHSM(t)
			return keygenStore(t, dir, hsm.Ref("0a02", "sa-rsa"))
		}},
		{name: "local-kms, ECDSA P-256", key: func(t *testing.T, dir string) issuercmd.KeygenResult {
			keystoretest.StartLocalKMS(t)
			res := keygenStore(t, dir, "awskms:name=ksa-sa", "--type", "ecdsa")
			assert.True(t, strings.HasPrefix(res.KeyRef, "awskms:key-id="), "the key ID AWS KMS chose: %s", res.KeyRef)
			return res
		}},
		{name: "local-kms, RSA 2048", key: func(t *testing.T, dir string) issuercmd.KeygenResult {
			keystoretest.StartLocalKMS(t)
			return keygenStore(t, dir, "awskms:name=ksa-sa-rsa")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res := tt.key(t, dir)
			assert.Empty(t, res.PrivateKeyFile)
			pubs, err := keystore.LoadPublicKeysFile(filepath.Join(dir, "sa.pub"))
			require.NoError(t, err)
			want, err := jwks.NewKey(pubs[0])
			require.NoError(t, err)
			assert.Equal(t, want.KeyID, res.Key.KeyID)
			info, err := os.Stat(filepath.Join(dir, "sa.pub"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())

			sock := filepath.Join(t.TempDir(), "signer.sock")
			startSigner(t, "--socket", sock, "--key", res.KeyRef)
			report, err := signertest.Run(t.Context(), signertest.Config{Address: sock})
			require.NoError(t, err)
			require.NoError(t, report.Err(), "%s", report)
			require.Len(t, report.KeySet.Keys, 1)
			assert.Equal(t, want.KeyID, report.KeySet.Keys[0].KeyID)
		})
	}
}
