package extsigner_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/oidc"
)

// TestMigrationFromKeyFiles: a kube-apiserver that signed with key files
// (--service-account-signing-key-file, --service-account-key-file) is
// restarted with "ksa signer serve", which signs with a new key and
// publishes the old public key (--previous-public-key) for kube-apiserver
// alone: every token issued before the switch still passes TokenReview,
// tokens issued after are signed with the new key, and the old key is
// left out of the discovery key set.
func TestMigrationFromKeyFiles(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		bin := buildKSA(t, version)
		oldKey, newKey := testkeys.Generated("rsa2048-migration"), testkeys.Generated("p256-migration")
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningKey: oldKey})
		ns := cp.Namespace(t)
		sa, pod := accountIn(t, cp.Clientset(), ns)
		before, err := requestToken(t.Context(), cp.Clientset(), ns, sa, pod)
		require.NoError(t, err)
		assert.Equal(t, mustKID(t, oldKey), headerKID(t, before), "kube-apiserver signs with its key file, Kubernetes' key ID")
		unseen, err := requestToken(t.Context(), cp.Clientset(), ns, sa, pod) // never reviewed before the switch
		require.NoError(t, err)
		st, err := reviewOn(t.Context(), cp.Clientset(), before)
		require.NoError(t, err)
		require.True(t, st.Authenticated, st.Error)

		dir, err := os.MkdirTemp("", "ksa-migration-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		s := startKSASigner(t, bin, filepath.Join(dir, "signer.sock"),
			"--key", writeKeyFile(t, dir, "sa-new.key", newKey),
			"--previous-public-key", writePublicFile(t, dir, "sa.pub", oldKey.Public()),
			"--max-token-lifetime", "1h")
		require.NoError(t, cp.RestartAPIServer(t.Context(), controlplane.APIServerConfig{SigningEndpoint: s.sock}))
		assert.Contains(t, cp.APIServerArgs, "--service-account-signing-endpoint="+s.sock)
		for _, a := range cp.APIServerArgs {
			assert.NotContains(t, a, "--service-account-key-file", "the endpoint replaces the key files")
		}

		for name, tok := range map[string]string{"reviewed before": before, "never reviewed": unseen} {
			st, err := reviewOn(t.Context(), cp.Clientset(), tok)
			require.NoError(t, err)
			assert.True(t, st.Authenticated, "a token issued before the switch (%s): %s", name, st.Error)
			assert.Equal(t, "system:serviceaccount:"+ns+":"+sa.Name, st.User.Username)
		}
		after, err := requestToken(t.Context(), cp.Clientset(), ns, sa, pod)
		require.NoError(t, err)
		assert.Equal(t, mustKID(t, newKey), headerKID(t, after), "the signer signs now")
		st, err = reviewOn(t.Context(), cp.Clientset(), after)
		require.NoError(t, err)
		assert.True(t, st.Authenticated, st.Error)

		// Discovery: the new key alone; the old one verifies for
		// kube-apiserver only.
		kids := kidsOfJWKS(t, getDoc(t, cp, cp.URL, oidc.JWKSPath))
		assert.Equal(t, []string{mustKID(t, newKey)}, kids)
		assert.False(t, slices.Contains(kids, mustKID(t, oldKey)))
		resp, _, err := s.fetchKeys(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []string{mustKID(t, newKey), mustKID(t, oldKey)}, kidsOf(resp.Keys))
		assert.True(t, resp.Keys[1].ExcludeFromOidcDiscovery)
		assert.Equal(t, time.Unix(0, 0).UTC(), resp.DataTimestamp.AsTime())
	})
}

// headerKID is the kid of a token's header, whoever signed it (the
// in-tree signer writes no typ).
func headerKID(t *testing.T, token string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	require.NoError(t, err)
	var h struct {
		KeyID string `json:"kid"`
	}
	require.NoError(t, json.Unmarshal(b, &h))
	return h.KeyID
}
