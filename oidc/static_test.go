package oidc_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/oidc"
)

// TestWriteStatic: the exported files are byte-identical to what the
// handler serves.
func TestWriteStatic(t *testing.T) {
	h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, Keys: mustKeys(t, testkeys.K8sRSA(), testkeys.K8sEC())})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, oidc.WriteStatic(dir, h.Documents()))
	disc, err := os.ReadFile(filepath.Join(dir, ".well-known", "openid-configuration"))
	require.NoError(t, err)
	keys, err := os.ReadFile(filepath.Join(dir, "openid", "v1", "jwks"))
	require.NoError(t, err)
	assert.Equal(t, body(t, get(t, h, http.MethodGet, oidc.DiscoveryPath)), string(disc))
	assert.Equal(t, body(t, get(t, h, http.MethodGet, oidc.JWKSPath)), string(keys))

	// Rewriting replaces the files; nothing else is left in the directory.
	require.NoError(t, h.SetKeys(mustKeys(t, testkeys.K8sEC())))
	require.NoError(t, oidc.WriteStatic(dir, h.Documents()))
	entries, err := os.ReadDir(filepath.Join(dir, "openid", "v1"))
	require.NoError(t, err)
	require.Len(t, entries, 1)

	require.Error(t, oidc.WriteStatic(dir, nil))
	require.Error(t, oidc.WriteStatic(dir, &oidc.Documents{}))
}
