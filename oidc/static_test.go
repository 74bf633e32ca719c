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

// TestWriteStaticReplacesOnlyDocuments: a file where a document goes is
// replaced only when it is an earlier document of the same kind; a key, a
// directory or anything else stops the writing before either file is
// written.
func TestWriteStaticReplacesOnlyDocuments(t *testing.T) {
	h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, Keys: mustKeys(t, testkeys.K8sRSA())})
	require.NoError(t, err)
	discovery := filepath.Join(".well-known", "openid-configuration")
	keySet := filepath.Join("openid", "v1", "jwks")
	privateKey := "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		name     string
		file     string
		content  string
		dir      bool
		replaced bool
	}{
		{name: "an earlier discovery document", file: discovery, content: `{"issuer":"https://old","jwks_uri":"https://old/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`, replaced: true},
		{name: "an earlier key set", file: keySet, content: `{"keys":[]}`, replaced: true},
		{name: "a private key where the discovery document goes", file: discovery, content: privateKey},
		{name: "a private key where the key set goes", file: keySet, content: privateKey},
		{name: "a key set with private material", file: keySet, content: `{"keys":[{"kty":"EC","crv":"P-256","x":"AQ","y":"AQ","d":"AQ"}]}`},
		{name: "a key set where the discovery document goes", file: discovery, content: `{"keys":[]}`},
		{name: "a directory", file: keySet, dir: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			if tc.dir {
				require.NoError(t, os.Mkdir(path, 0o755))
			} else {
				require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			}
			err := oidc.WriteStatic(dir, h.Documents())
			if tc.replaced {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, oidc.ErrNotReplaced)
			if !tc.dir {
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, tc.content, string(got), "left alone")
			}
			for _, other := range []string{discovery, keySet} {
				if other != tc.file {
					assert.NoFileExists(t, filepath.Join(dir, other), "nothing written")
				}
			}
		})
	}
}
