package oidctest_test

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

var testSA = ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "3f1c6a8e-0b7d-4d2e-9a57-2c4e1b9f0a11"}

// mint mints a token with srv's current key, failing the test on error.
func mint(t testing.TB, srv *oidctest.Server, req tokens.Request) string {
	t.Helper()
	raw, err := srv.Mint(t.Context(), req)
	require.NoError(t, err)
	return raw
}

// rotate rotates srv's signing key, failing the test on error.
func rotate(t testing.TB, srv *oidctest.Server, signer crypto.Signer, keepOld bool) jwks.Key {
	t.Helper()
	key, err := srv.Rotate(signer, keepOld)
	require.NoError(t, err)
	return key
}

func mintRequest() tokens.Request {
	return tokens.Request{ServiceAccount: testSA, Audiences: []string{"vault"}}
}

// get sends a request to the server and returns the status, headers and
// body.
func get(t *testing.T, srv *oidctest.Server, method, url, bearer string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// validate checks raw against keys as a static relying party of srv.
func validate(t *testing.T, srv *oidctest.Server, keys []jwks.Key, raw string) (*tokens.Result, error) {
	t.Helper()
	src, err := jwks.NewStaticSource(keys...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{srv.Issuer()}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true})
	require.NoError(t, err)
	return v.Validate(t.Context(), raw)
}

func keyIDs(keys []jwks.Key) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.KeyID
	}
	return ids
}

// servedKeyIDs fetches the JWKS and returns its kids.
func servedKeyIDs(t *testing.T, srv *oidctest.Server) []string {
	t.Helper()
	status, _, body := get(t, srv, http.MethodGet, srv.URL()+oidc.JWKSPath, "")
	require.Equal(t, http.StatusOK, status)
	set, err := jwks.ParseSet(body, jwks.ParseOptions{})
	require.NoError(t, err)
	require.Empty(t, set.Skipped)
	return keyIDs(set.Keys)
}

func TestStartDiscovery(t *testing.T) {
	tests := []struct {
		name string
		path string
	}{
		{name: "root", path: ""},
		{name: "path", path: "/cluster-1"},
		{name: "nested path", path: "/tenants/a/cluster-1"},
		{name: "trailing slash", path: "/cluster-1/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oidctest.Start(t, oidctest.Config{Path: tt.path})
			assert.True(t, strings.HasPrefix(srv.URL(), "https://127.0.0.1:"), srv.URL())
			assert.Equal(t, srv.URL()+tt.path, srv.Issuer())

			md, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
			require.NoError(t, err)
			assert.Equal(t, srv.Issuer(), md.Issuer)
			assert.Equal(t, srv.URL()+oidc.JWKSPath, md.JWKSURI)
			assert.Equal(t, []string{"ES256"}, md.SigningAlgs)
			discovery, jwksRequests := srv.Requests()
			assert.Equal(t, int64(1), discovery)
			assert.Zero(t, jwksRequests)
		})
	}
}

func TestServerDocuments(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{Path: "/cluster-1"})

	status, hdr, body := get(t, srv, http.MethodGet, srv.Issuer()+oidc.DiscoveryPath, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, oidc.DiscoveryContentType, hdr.Get("Content-Type"))
	assert.Equal(t, "public, max-age=3600", hdr.Get("Cache-Control"))
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	assert.Equal(t, srv.Issuer(), doc.Issuer)
	assert.Equal(t, srv.URL()+oidc.JWKSPath, doc.JWKSURI)

	status, hdr, _ = get(t, srv, http.MethodGet, srv.URL()+oidc.JWKSPath, "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, oidc.JWKSContentType, hdr.Get("Content-Type"))
	assert.Equal(t, "public, max-age=3600", hdr.Get("Cache-Control"))
	assert.Equal(t, keyIDs(srv.Keys()), servedKeyIDs(t, srv))
	require.Len(t, srv.Keys(), 1)
}

func TestServerRoutes(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{Path: "/cluster-1"})
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantBody   bool
	}{
		{name: "discovery", method: http.MethodGet, path: "/cluster-1" + oidc.DiscoveryPath, wantStatus: http.StatusOK, wantBody: true},
		{name: "jwks", method: http.MethodGet, path: oidc.JWKSPath, wantStatus: http.StatusOK, wantBody: true},
		{name: "jwks with a query", method: http.MethodGet, path: oidc.JWKSPath + "?x=1", wantStatus: http.StatusOK, wantBody: true},
		{name: "HEAD jwks", method: http.MethodHead, path: oidc.JWKSPath, wantStatus: http.StatusOK},
		{name: "POST jwks", method: http.MethodPost, path: oidc.JWKSPath, wantStatus: http.StatusMethodNotAllowed, wantBody: true},
		{name: "jwks under the issuer path", method: http.MethodGet, path: "/cluster-1" + oidc.JWKSPath, wantStatus: http.StatusNotFound, wantBody: true},
		{name: "unknown path", method: http.MethodGet, path: "/healthz", wantStatus: http.StatusNotFound, wantBody: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := get(t, srv, tt.method, srv.URL()+tt.path, "")
			assert.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantBody, len(body) > 0)
		})
	}
}

func TestServerClientTrustsServer(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: &http.Client{}})
	require.ErrorIs(t, err, oidc.ErrDiscovery, "a client without the test CA is refused")
	_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
	require.NoError(t, err)
}

func TestServerMint(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	raw := mint(t, srv, mintRequest())
	res, err := validate(t, srv, srv.Keys(), raw)
	require.NoError(t, err)
	assert.Equal(t, testSA, res.Identity.ServiceAccount)
	assert.Equal(t, srv.Issuer(), res.Issuer)
	assert.Equal(t, srv.Keys()[0].KeyID, res.KeyID)
	assert.Equal(t, "ES256", res.Algorithm, "the default key is P-256")
	assert.Equal(t, srv.Keys()[0].KeyID, srv.Minter().KeyID())
	assert.Equal(t, srv.Issuer(), srv.Minter().Issuer())
}

func TestOptionsSignerAndNow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := oidctest.Start(t, oidctest.Config{Signer: testkeys.K8sRSA(), Now: func() time.Time { return now }})

	keys := srv.Keys()
	require.Len(t, keys, 1)
	assert.Equal(t, "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU", keys[0].KeyID, "Kubernetes' kid for its RSA test key")
	assert.Equal(t, "RS256", srv.Minter().Algorithm())

	tok, err := srv.Minter().Mint(t.Context(), mintRequest())
	require.NoError(t, err)
	assert.Equal(t, now, tok.Claims.IssuedAt)
	assert.Equal(t, now.Add(time.Hour), tok.ExpirationTimestamp)
}

func TestRotate(t *testing.T) {
	tests := []struct {
		name    string
		signer  crypto.Signer
		keepOld bool
	}{
		{name: "keep old keys", keepOld: true},
		{name: "drop old keys"},
		{name: "given signer", signer: testkeys.K8sRSA(), keepOld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oidctest.Start(t, oidctest.Config{})
			old := srv.Keys()[0]
			oldToken := mint(t, srv, mintRequest())

			key := rotate(t, srv, tt.signer, tt.keepOld)
			assert.NotEqual(t, old.KeyID, key.KeyID)
			if tt.signer != nil {
				want, err := jwks.NewKey(tt.signer)
				require.NoError(t, err)
				assert.Equal(t, want.KeyID, key.KeyID)
			}
			want := []string{key.KeyID}
			if tt.keepOld {
				want = append(want, old.KeyID)
			}
			assert.Equal(t, want, keyIDs(srv.Keys()), "the new key first")
			assert.Equal(t, want, servedKeyIDs(t, srv))
			assert.Equal(t, key.KeyID, srv.Minter().KeyID())

			res, err := validate(t, srv, srv.Keys(), mint(t, srv, mintRequest()))
			require.NoError(t, err)
			assert.Equal(t, key.KeyID, res.KeyID)

			_, err = validate(t, srv, srv.Keys(), oldToken)
			if tt.keepOld {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tokens.ErrUnknownKeyID)
			}
		})
	}
}

func TestSetFailing(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	srv.SetFailing(true)
	for _, path := range []string{oidc.DiscoveryPath, oidc.JWKSPath} {
		status, _, _ := get(t, srv, http.MethodGet, srv.URL()+path, "")
		assert.Equal(t, http.StatusInternalServerError, status, path)
	}
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
	var de *oidc.DiscoveryError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, http.StatusInternalServerError, de.Status)

	srv.SetFailing(false)
	_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
	require.NoError(t, err)
	assert.Len(t, servedKeyIDs(t, srv), 1)
}

func TestBearerToken(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{BearerToken: "s3cret"})
	tests := []struct {
		name       string
		bearer     string
		failing    bool
		wantStatus int
	}{
		{name: "none", wantStatus: http.StatusUnauthorized},
		{name: "wrong", bearer: "guess", wantStatus: http.StatusUnauthorized},
		{name: "right", bearer: "s3cret", wantStatus: http.StatusOK},
		{name: "unauthorized before failing", failing: true, wantStatus: http.StatusUnauthorized},
		{name: "right but failing", bearer: "s3cret", failing: true, wantStatus: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.SetFailing(tt.failing)
			defer srv.SetFailing(false)
			for _, path := range []string{oidc.DiscoveryPath, oidc.JWKSPath} {
				status, _, _ := get(t, srv, http.MethodGet, srv.URL()+path, tt.bearer)
				assert.Equal(t, tt.wantStatus, status, path)
			}
		})
	}
	discovery, jwksRequests := srv.Requests()
	assert.Equal(t, int64(len(tests)), discovery, "refused requests are counted")
	assert.Equal(t, int64(len(tests)), jwksRequests)
}

func TestRequests(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{Path: "/c"})
	for range 3 {
		get(t, srv, http.MethodGet, srv.Issuer()+oidc.DiscoveryPath, "")
	}
	for range 2 {
		get(t, srv, http.MethodGet, srv.URL()+oidc.JWKSPath, "")
	}
	get(t, srv, http.MethodGet, srv.URL()+"/other", "")
	discovery, jwksRequests := srv.Requests()
	assert.Equal(t, int64(3), discovery)
	assert.Equal(t, int64(2), jwksRequests)
}

func TestServerWithRemoteKeySet(t *testing.T) {
	// The relying-party loop the server exists for: a remote key set
	// follows a rotation through an unknown kid and rides out a failure.
	srv := oidctest.Start(t, oidctest.Config{})
	remote, err := jwks.NewRemote(jwks.RemoteConfig{URL: srv.URL() + oidc.JWKSPath, Client: srv.Client()})
	require.NoError(t, err)

	old := srv.Minter().KeyID()
	keys, err := remote.Keys(t.Context(), old)
	require.NoError(t, err)
	require.Len(t, keys, 1)

	key := rotate(t, srv, nil, false)
	keys, err = remote.Keys(t.Context(), key.KeyID)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	_, jwksRequests := srv.Requests()
	assert.Equal(t, int64(2), jwksRequests)

	srv.SetFailing(true)
	keys, err = remote.Keys(t.Context(), key.KeyID)
	require.NoError(t, err, "fresh keys need no request")
	assert.Len(t, keys, 1)
	_, err = remote.Keys(t.Context(), old)
	require.ErrorIs(t, err, jwks.ErrFetch, "dropped key, issuer failing")
}

func TestServerConcurrentUse(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				switch i % 4 {
				case 0:
					rotate(t, srv, nil, i%8 == 0)
				case 1:
					raw := mint(t, srv, mintRequest())
					assert.NotEmpty(t, raw)
				case 2:
					srv.SetFailing(false)
					assert.NotEmpty(t, srv.Keys())
				default:
					status, _, _ := get(t, srv, http.MethodGet, srv.URL()+oidc.JWKSPath, "")
					assert.Equal(t, http.StatusOK, status)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, srv.Keys()[0].KeyID, srv.Minter().KeyID(), "the signing key is published first")
}

// fatalTB records a Fatalf and stops the function under test as t.Fatalf
// would, without failing the real test.
type fatalTB struct {
	testing.TB // nil: only the methods below may be called
	msg        string
	cleanups   []func()
}

type fatalStop struct{}

func (f *fatalTB) Helper()                  {}
func (f *fatalTB) Cleanup(fn func())        { f.cleanups = append(f.cleanups, fn) }
func (f *fatalTB) Context() context.Context { return context.Background() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(fatalStop{})
}

// run calls fn with the recorder, then runs the cleanups fn registered, and
// returns the Fatalf message or "".
func (f *fatalTB) run(fn func(t testing.TB)) string {
	defer func() {
		for i := len(f.cleanups) - 1; i >= 0; i-- {
			f.cleanups[i]()
		}
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatalStop); !ok {
					panic(r)
				}
			}
		}()
		fn(f)
	}()
	return f.msg
}

func TestStartFailsTheTest(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  oidctest.Config
	}{
		{name: "unsupported signer", cfg: oidctest.Config{Signer: testkeys.Generated("p224")}},
		{name: "path without a slash", cfg: oidctest.Config{Path: "cluster-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &fatalTB{}
			msg := rec.run(func(tb testing.TB) { oidctest.Start(tb, tt.cfg) })
			assert.True(t, strings.HasPrefix(msg, "oidctest: "), "Fatalf not called or unprefixed: %q", msg)
			_, err := oidctest.NewServer(tt.cfg)
			require.Error(t, err)
		})
	}
}

// TestMintAndRotateReturnErrors: outside a test, failures come back as
// errors, and a failed rotation changes nothing.
func TestMintAndRotateReturnErrors(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	_, err := srv.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "ns", Name: "sa"}}) // no UID
	require.ErrorIs(t, err, tokens.ErrInvalidRequest)
	_, err = srv.Rotate(testkeys.Generated("p224"), true)
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	assert.Len(t, srv.Keys(), 1, "a failed rotation publishes nothing")
}
