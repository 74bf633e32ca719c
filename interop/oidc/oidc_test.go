// Package oidc_test proves ksa's oidc package against its peers: go-oidc
// verifies ksa's tokens through ksa's issuer handler, ksa's verifier verifies
// tokens through documents rendered by Kubernetes' own OIDC metadata
// provider, and for the same keys and settings the two implementations'
// documents are byte-identical.
package oidc_test

import (
	"crypto"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

var sa = ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"}

var keySets = []struct {
	name string
	keys []crypto.Signer
}{
	{"RSA", []crypto.Signer{testkeys.K8sRSA()}},
	{"EC P-256", []crypto.Signer{testkeys.K8sEC()}},
	{"RSA and EC", []crypto.Signer{testkeys.K8sRSA(), testkeys.K8sEC()}},
	{"P-384 and P-521", []crypto.Signer{testkeys.Generated("p384"), testkeys.Generated("p521")}},
	{"RSA 3072 and P-256", []crypto.Signer{testkeys.Generated("rsa3072"), testkeys.Generated("p256")}},
}

// TestDocumentsMatchKubernetes: for the same issuer, jwks_uri or external
// address and keys, ksa renders the bytes Kubernetes' provider renders.
func TestDocumentsMatchKubernetes(t *testing.T) {
	configs := []oidc.IssuerConfig{
		{Issuer: "https://kubernetes.default.svc.cluster.local", JWKSURI: "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"},
		{Issuer: "https://oidc.example.com/cluster-1", ExternalAddress: "10.0.0.1:6443"},
		{Issuer: "https://oidc.example.com", JWKSURI: "https://cdn.example.com/keys?v=1&x=<y>"},
	}
	for _, ks := range keySets {
		for _, cfg := range configs {
			t.Run(ks.name+"/"+cfg.Issuer, func(t *testing.T) {
				var in []any
				for _, k := range ks.keys {
					in = append(in, k)
				}
				getter, err := serviceaccount.StaticPublicKeysGetter(in)
				require.NoError(t, err)
				kube, err := serviceaccount.NewOpenIDMetadataProvider(cfg.Issuer, cfg.JWKSURI, cfg.ExternalAddress, getter)
				require.NoError(t, err)
				keys := ksaKeys(t, ks.keys)
				docs, err := oidc.Render(cfg, keys)
				require.NoError(t, err)

				kubeConfig, maxAge := kube.GetConfigJSON()
				kubeKeys, _ := kube.GetKeysetJSON()
				assert.Equal(t, string(kubeConfig), string(docs.Discovery))
				assert.Equal(t, string(kubeKeys), string(docs.JWKS))
				assert.Equal(t, int(oidc.DefaultMaxAge/time.Second), maxAge)
			})
		}
	}
}

// TestConfigErrorsMatchKubernetes: the configurations Kubernetes refuses, ksa
// refuses: an issuer that is not https or has a query or fragment, a jwks URI
// that is not an absolute https URL, an external address with a scheme, and
// neither a jwks URI nor an external address.
func TestConfigErrorsMatchKubernetes(t *testing.T) {
	getter, err := serviceaccount.StaticPublicKeysGetter([]any{testkeys.K8sEC()})
	require.NoError(t, err)
	key, err := jwks.NewKey(testkeys.K8sEC())
	require.NoError(t, err)
	keys := []jwks.Key{key}
	for _, cfg := range []oidc.IssuerConfig{
		{Issuer: "http://issuer.example.com", ExternalAddress: "a"},
		{Issuer: "issuer.example.com", ExternalAddress: "a"},
		{Issuer: "https://issuer.example.com?foo=bar", ExternalAddress: "a"},
		{Issuer: "https://issuer.example.com#baz", ExternalAddress: "a"},
		{Issuer: "issuer", ExternalAddress: "a"},
		{Issuer: "https://issuer.example.com", JWKSURI: "http://issuer.example.com/openid/v1/jwks"},
		{Issuer: "https://issuer.example.com", JWKSURI: "issuer/openid/v1/jwks"},
		{Issuer: "https://issuer.example.com", ExternalAddress: "https://192.0.2.1:80"},
		{Issuer: "https://issuer.example.com"},
		{Issuer: "", ExternalAddress: "a"},
		{Issuer: "https://issuer.example.com", JWKSURI: "https://[::1"},
	} {
		_, kerr := serviceaccount.NewOpenIDMetadataProvider(cfg.Issuer, cfg.JWKSURI, cfg.ExternalAddress, getter)
		_, err := oidc.Render(cfg, keys)
		assert.Equal(t, kerr != nil, err != nil, "%+v: kubernetes %v, ksa %v", cfg, kerr, err)
		if err != nil {
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.True(t, strings.HasPrefix(ce.Field, "oidc.IssuerConfig."), "an issuer setting: %s", ce.Field)
		}
	}
}

// TestGoOIDCVerifiesKSATokens: go-oidc, the most used Go relying party,
// discovers ksa's issuer handler and verifies ksa's tokens.
func TestGoOIDCVerifiesKSATokens(t *testing.T) {
	for _, ks := range keySets {
		t.Run(ks.name, func(t *testing.T) {
			var h *oidc.Handler
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
			t.Cleanup(srv.Close)
			keys := ksaKeys(t, ks.keys)
			h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: srv.URL, JWKSURI: srv.URL + oidc.JWKSPath, Keys: keys})
			require.NoError(t, err)

			ctx := gooidc.ClientContext(t.Context(), srv.Client())
			provider, err := gooidc.NewProvider(ctx, srv.URL)
			require.NoError(t, err)
			verifier := provider.Verifier(&gooidc.Config{ClientID: "vault"})

			for _, signer := range ks.keys {
				m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: srv.URL, Signer: signer})
				require.NoError(t, err)
				tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"},
					BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
				require.NoError(t, err)
				idt, err := verifier.Verify(ctx, tok.Raw)
				require.NoError(t, err)
				assert.Equal(t, sa.Username(), idt.Subject)
				var claims struct {
					Kubernetes struct {
						Namespace string `json:"namespace"`
						Pod       struct {
							Name string `json:"name"`
						} `json:"pod"`
					} `json:"kubernetes.io"`
				}
				require.NoError(t, idt.Claims(&claims))
				assert.Equal(t, "prod", claims.Kubernetes.Namespace)
				assert.Equal(t, "p", claims.Kubernetes.Pod.Name)
			}
		})
	}
}

// TestKSAVerifiesThroughKubernetesDocuments: ksa's relying party discovers
// an issuer whose documents come from Kubernetes' own provider, and verifies
// tokens from Kubernetes' own generator.
func TestKSAVerifiesThroughKubernetesDocuments(t *testing.T) {
	for _, ks := range keySets {
		t.Run(ks.name, func(t *testing.T) {
			var kube serviceaccount.OpenIDMetadataProvider
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case oidc.DiscoveryPath:
					b, _ := kube.GetConfigJSON()
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(b)
				case oidc.JWKSPath:
					b, _ := kube.GetKeysetJSON()
					w.Header().Set("Content-Type", "application/jwk-set+json")
					_, _ = w.Write(b)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			getter, err := serviceaccount.StaticPublicKeysGetter(anySlice(ks.keys))
			require.NoError(t, err)
			kube, err = serviceaccount.NewOpenIDMetadataProvider(srv.URL, srv.URL+oidc.JWKSPath, "", getter)
			require.NoError(t, err)

			v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
				Issuers:   []string{srv.URL},
				Client:    srv.Client(),
				Audiences: []string{"vault"},
			})
			require.NoError(t, err)
			for _, signer := range ks.keys {
				gen, err := serviceaccount.JWTTokenGenerator(srv.URL, signer)
				require.NoError(t, err)
				pub, priv, err := serviceaccount.Claims(kubeSA(), nil, nil, nil, nil, nil, 3600, 0, []string{"vault"}, nil)
				require.NoError(t, err)
				raw, err := gen.GenerateToken(t.Context(), pub, priv)
				require.NoError(t, err)
				res, err := v.Verify(t.Context(), raw)
				require.NoError(t, err)
				assert.Equal(t, sa, res.Identity.ServiceAccount)
			}
		})
	}
}

func anySlice(keys []crypto.Signer) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// ksaKeys turns signers into the keys ksa publishes.
func ksaKeys(t *testing.T, signers []crypto.Signer) []jwks.Key {
	t.Helper()
	keys := make([]jwks.Key, len(signers))
	for i, s := range signers {
		var err error
		keys[i], err = jwks.NewKey(s)
		require.NoError(t, err)
	}
	return keys
}
