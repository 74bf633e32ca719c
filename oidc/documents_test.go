package oidc_test

import (
	"crypto"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// Kubernetes' exact documents for its test keys, as the OIDC metadata tests
// of k8s.io/kubernetes/pkg/serviceaccount expect them.
const (
	k8sDiscovery = `{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`
	k8sJWKS      = `{"keys":[{"use":"sig","kty":"RSA","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU","alg":"RS256","n":"249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw","e":"AQAB"},{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}`
)

func mustKeys(t *testing.T, keys ...crypto.PublicKey) []jwks.Key {
	t.Helper()
	out := make([]jwks.Key, len(keys))
	for i, k := range keys {
		var err error
		out[i], err = jwks.NewKey(k)
		require.NoError(t, err)
	}
	return out
}

// TestRenderKubernetes reproduces the cases of Kubernetes' OIDC metadata
// tests (k8s.io/kubernetes/pkg/serviceaccount): the documents for EC, RSA
// and both keys, public-only output from private keys, a jwks_uri built
// from the external address, and the configurations refused.
func TestRenderKubernetes(t *testing.T) {
	rsaKey, ecKey := testkeys.K8sRSA(), testkeys.K8sEC()
	tests := []struct {
		name          string
		cfg           oidc.IssuerConfig
		keys          []jwks.Key
		wantDiscovery string
		wantJWKS      string
		wantJWKSURI   string
		wantErr       error
		// issuer: the refusal names a field of IssuerConfig.
		issuer bool
	}{
		{
			name: "item 83: issuer and explicit jwks_uri", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "https://issuer.example.com/openid/v1/jwks"},
			keys: mustKeys(t, rsaKey.Public(), ecKey.Public()), wantDiscovery: k8sDiscovery, wantJWKS: k8sJWKS,
		},
		{
			name: "item 86: private keys give the same public documents", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "https://issuer.example.com/openid/v1/jwks"},
			keys: mustKeys(t, rsaKey, ecKey), wantDiscovery: k8sDiscovery, wantJWKS: k8sJWKS,
		},
		{
			name: "item 76: EC only", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "https://issuer.example.com/openid/v1/jwks"},
			keys:          mustKeys(t, ecKey),
			wantDiscovery: `{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}`,
		},
		{
			name: "item 84: jwks_uri from the external address", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", ExternalAddress: "192.0.2.1:80"},
			keys: mustKeys(t, ecKey), wantJWKSURI: "https://192.0.2.1:80/openid/v1/jwks",
		},
		{
			name: "item 85: IP issuer", cfg: oidc.IssuerConfig{Issuer: "https://192.0.2.1:80", ExternalAddress: "192.0.2.1:80"},
			keys: mustKeys(t, ecKey), wantJWKSURI: "https://192.0.2.1:80/openid/v1/jwks",
		},
		{
			name: "explicit jwks_uri wins over the external address", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "https://cdn.example.com/keys", ExternalAddress: "192.0.2.1:80"},
			keys: mustKeys(t, ecKey), wantJWKSURI: "https://cdn.example.com/keys",
		},
		{
			name: "issuer with a path", cfg: oidc.IssuerConfig{Issuer: "https://oidc.example.com/cluster-1", JWKSURI: "https://oidc.example.com/cluster-1/openid/v1/jwks"},
			keys: mustKeys(t, ecKey), wantJWKSURI: "https://oidc.example.com/cluster-1/openid/v1/jwks",
		},
		{
			name: "algorithms sorted and de-duplicated", cfg: oidc.IssuerConfig{Issuer: "https://i.example.com", ExternalAddress: "i.example.com"},
			keys:          mustKeys(t, testkeys.Generated("p384"), ecKey, rsaKey, testkeys.Generated("p256"), testkeys.Generated("ed25519")),
			wantDiscovery: `{"issuer":"https://i.example.com","jwks_uri":"https://i.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","ES384","EdDSA","RS256"]}`,
		},
		{name: "item 87: http issuer", cfg: oidc.IssuerConfig{Issuer: "http://issuer.example.com", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: issuer without scheme", cfg: oidc.IssuerConfig{Issuer: "issuer.example.com", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: issuer with query", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com?foo=bar", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: issuer with fragment", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com#baz", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: issuer with query and fragment", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com?foo=bar#baz", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: bare word issuer", cfg: oidc.IssuerConfig{Issuer: "issuer", ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: http jwks_uri", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "http://issuer.example.com/openid/v1/jwks"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: jwks_uri without scheme", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "issuer.example.com/openid/v1/jwks"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: relative jwks_uri", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "issuer/openid/v1/jwks"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: external address with scheme", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com", ExternalAddress: "https://192.0.2.1:80"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "item 87: neither jwks_uri nor external address", cfg: oidc.IssuerConfig{Issuer: "https://issuer.example.com"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "empty issuer", cfg: oidc.IssuerConfig{ExternalAddress: "a"}, keys: mustKeys(t, ecKey), wantErr: ksa.ErrInvalidConfig, issuer: true},
		{name: "no keys", cfg: oidc.IssuerConfig{Issuer: "https://i.example.com", ExternalAddress: "a"}, wantErr: jwks.ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := oidc.Render(tt.cfg, tt.keys)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.issuer {
					requireIssuerRefused(t, err)
				}
				return
			}
			require.NoError(t, err)
			if tt.wantDiscovery != "" {
				assert.Equal(t, tt.wantDiscovery, string(docs.Discovery))
			}
			if tt.wantJWKS != "" {
				assert.Equal(t, tt.wantJWKS, string(docs.JWKS))
			}
			if tt.wantJWKSURI != "" {
				assert.Equal(t, tt.wantJWKSURI, docs.JWKSURI)
				assert.Contains(t, string(docs.Discovery), `"jwks_uri":"`+tt.wantJWKSURI+`"`)
			}
			require.NoError(t, jwks.Audit(docs.JWKS))
		})
	}
}

// TestRenderExcludedKeys: verify-only keys are left out of both documents
// (item 81); when nothing is left, there is nothing to publish.
func TestRenderExcludedKeys(t *testing.T) {
	keys := mustKeys(t, testkeys.K8sRSA(), testkeys.K8sEC())
	keys[0].ExcludeFromDiscovery = true
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: "https://i.example.com", ExternalAddress: "i.example.com"}, keys)
	require.NoError(t, err)
	assert.NotContains(t, string(docs.JWKS), testkeys.K8sRSAKeyID)
	assert.Contains(t, string(docs.JWKS), testkeys.K8sECKeyID)
	assert.Contains(t, string(docs.Discovery), `"id_token_signing_alg_values_supported":["ES256"]`)

	keys[1].ExcludeFromDiscovery = true
	_, err = oidc.Render(oidc.IssuerConfig{Issuer: "https://i.example.com", ExternalAddress: "i.example.com"}, keys)
	require.ErrorIs(t, err, jwks.ErrNoKeys)
}
