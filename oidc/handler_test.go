package oidc_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

var k8sIssuer = oidc.IssuerConfig{Issuer: "https://issuer.example.com", JWKSURI: "https://issuer.example.com/openid/v1/jwks"}

func get(t *testing.T, h http.Handler, method, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestHandlerServes follows kube-apiserver's routes
// (k8s.io/kubernetes/pkg/routes) and the serving tests of
// k8s.io/kubernetes/pkg/serviceaccount: the discovery document as
// application/json and the key set as application/jwk-set+json, both with
// Cache-Control public, max-age=3600; a query string ignored; other paths,
// /.well-known and /openid/v1/jwks/foo among them, not found.
func TestHandlerServes(t *testing.T) {
	h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, Keys: mustKeys(t, testkeys.K8sRSA(), testkeys.K8sEC())})
	require.NoError(t, err)
	tests := []struct {
		name        string
		method      string
		target      string
		wantStatus  int
		wantType    string
		wantBody    string
		wantNoBody  bool
		wantControl string
	}{
		{name: "discovery", method: http.MethodGet, target: "/.well-known/openid-configuration", wantStatus: 200, wantType: "application/json", wantBody: k8sDiscovery, wantControl: "public, max-age=3600"},
		{name: "jwks", method: http.MethodGet, target: "/openid/v1/jwks", wantStatus: 200, wantType: "application/jwk-set+json", wantBody: k8sJWKS, wantControl: "public, max-age=3600"},
		{name: "query ignored", method: http.MethodGet, target: "/openid/v1/jwks?format=yaml", wantStatus: 200, wantBody: k8sJWKS},
		{name: "fragment ignored", method: http.MethodGet, target: "/openid/v1/jwks#issuer", wantStatus: 200, wantBody: k8sJWKS},
		{name: "head", method: http.MethodHead, target: "/openid/v1/jwks", wantStatus: 200, wantType: "application/jwk-set+json", wantNoBody: true},
		{name: "well-known prefix", method: http.MethodGet, target: "/.well-known", wantStatus: 404},
		{name: "jwks subpath", method: http.MethodGet, target: "/openid/v1/jwks/foo", wantStatus: 404},
		{name: "discovery with a trailing slash", method: http.MethodGet, target: "/.well-known/openid-configuration/", wantStatus: 200, wantBody: k8sDiscovery},
		{name: "jwks with a trailing slash", method: http.MethodGet, target: "/openid/v1/jwks/", wantStatus: 200, wantBody: k8sJWKS},
		{name: "root", method: http.MethodGet, target: "/", wantStatus: 404},
		{name: "post", method: http.MethodPost, target: "/openid/v1/jwks", wantStatus: 405},
		{name: "delete", method: http.MethodDelete, target: "/.well-known/openid-configuration", wantStatus: 405},
	}
	// Through a real server and client, as Kubernetes' tests do (the client
	// drops fragments before sending).
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.target, nil)
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, resp.Header.Get("Content-Type"))
			}
			if tt.wantControl != "" {
				assert.Equal(t, tt.wantControl, resp.Header.Get("Cache-Control"))
			}
			if tt.wantBody != "" {
				assert.Equal(t, tt.wantBody, body(t, resp))
			}
			if tt.wantNoBody {
				assert.Empty(t, body(t, resp))
			}
		})
	}
}

// TestHandlerSetKeys: documents change only when keys are set (items 77, 80,
// 81), and a failed render keeps the previous documents.
func TestHandlerSetKeys(t *testing.T) {
	h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, MaxAge: 5 * time.Minute, Keys: mustKeys(t, testkeys.K8sEC())})
	require.NoError(t, err)
	resp := get(t, h, http.MethodGet, "/.well-known/openid-configuration")
	assert.Equal(t, "public, max-age=300", resp.Header.Get("Cache-Control"))
	assert.Contains(t, body(t, resp), `["ES256"]`)

	require.NoError(t, h.SetKeys(mustKeys(t, testkeys.K8sRSA())))
	assert.Contains(t, body(t, get(t, h, http.MethodGet, "/.well-known/openid-configuration")), `["RS256"]`)
	assert.Contains(t, body(t, get(t, h, http.MethodGet, "/openid/v1/jwks")), testkeys.K8sRSAKeyID)

	keys := mustKeys(t, testkeys.K8sRSA(), testkeys.K8sEC())
	keys[0].ExcludeFromDiscovery = true
	require.NoError(t, h.SetKeys(keys))
	jwksBody := body(t, get(t, h, http.MethodGet, "/openid/v1/jwks"))
	assert.NotContains(t, jwksBody, testkeys.K8sRSAKeyID)
	assert.Contains(t, jwksBody, testkeys.K8sECKeyID)

	before := h.Documents()
	err = h.SetKeys(nil)
	require.ErrorIs(t, err, jwks.ErrNoKeys)
	assert.Same(t, before, h.Documents(), "failed render keeps the previous documents")
	err = h.SetKeys([]jwks.Key{{KeyID: "x", Public: testkeys.K8sRSA()}})
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey, "a private key in Public cannot be published")
	assert.Same(t, before, h.Documents())

	_, err = oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, MaxAge: -time.Second, Keys: mustKeys(t, testkeys.K8sEC())})
	require.Error(t, err)
}

// TestHandlerConcurrentRotation: readers never see a torn pair while keys
// rotate (run with -race).
func TestHandlerConcurrentRotation(t *testing.T) {
	a, b := mustKeys(t, testkeys.K8sEC()), mustKeys(t, testkeys.K8sRSA())
	h, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: k8sIssuer.Issuer, JWKSURI: k8sIssuer.JWKSURI, ExternalAddress: k8sIssuer.ExternalAddress, Keys: a})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				d := h.Documents()
				if string(d.Discovery) == "" || string(d.JWKS) == "" {
					t.Error("empty documents")
					return
				}
			}
		}()
	}
	for j := 0; j < 100; j++ {
		keys := a
		if j%2 == 0 {
			keys = b
		}
		require.NoError(t, h.SetKeys(keys))
	}
	wg.Wait()
}
