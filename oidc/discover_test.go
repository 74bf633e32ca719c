package oidc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
)

func TestDiscover(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{Path: "/cluster-1"})
	md, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
	require.NoError(t, err)
	assert.Equal(t, srv.Issuer(), md.Issuer)
	assert.Equal(t, srv.URL()+oidc.JWKSPath, md.JWKSURI)
	assert.Equal(t, []string{"id_token"}, md.ResponseTypes)
	assert.Equal(t, []string{"public"}, md.SubjectTypes)
	assert.Equal(t, []string{"ES256"}, md.SigningAlgs)
}

// TestDiscoverIssuerMismatch: exact comparison, a typed error with both
// values.
func TestDiscoverIssuerMismatch(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	// A trailing slash reaches the same document but names another issuer.
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer() + "/", Client: srv.Client()})
	require.ErrorIs(t, err, oidc.ErrIssuerMismatch)
	var mm *oidc.IssuerMismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, srv.Issuer()+"/", mm.Expected)
	assert.Equal(t, srv.Issuer(), mm.Discovered)
}

// TestDiscoverBearer: with a bearer function the request is authenticated,
// and the function is called for each request.
func TestDiscoverBearer(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{BearerToken: "s3cret"})
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client()})
	var derr *oidc.DiscoveryError
	require.ErrorAs(t, err, &derr)
	assert.Equal(t, http.StatusUnauthorized, derr.Status)

	calls := 0
	bearer := func(context.Context) (string, error) { calls++; return "s3cret", nil }
	for i := 0; i < 2; i++ {
		_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client(), BearerToken: bearer})
		require.NoError(t, err)
	}
	assert.Equal(t, 2, calls)

	_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.Issuer(), Client: srv.Client(),
		BearerToken: func(context.Context) (string, error) { return "", assert.AnError }})
	require.ErrorIs(t, err, oidc.ErrDiscovery)
	require.ErrorIs(t, err, assert.AnError)
}

// TestDiscoverBadDocuments: every malformed or hostile answer is a typed
// error.
func TestDiscoverBadDocuments(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    func(issuer string) string
		insec   bool
		wantErr error
	}{
		{name: "500", status: 500, body: func(string) string { return "oops" }, wantErr: oidc.ErrDiscovery},
		{name: "not JSON", status: 200, body: func(string) string { return "<html>" }, wantErr: oidc.ErrDiscovery},
		{name: "duplicate issuer", status: 200, body: func(i string) string { return `{"issuer":"` + i + `","issuer":"x","jwks_uri":"https://k"}` }, wantErr: oidc.ErrDiscovery},
		{name: "no jwks_uri", status: 200, body: func(i string) string { return `{"issuer":"` + i + `"}` }, wantErr: oidc.ErrDiscovery},
		{name: "http jwks_uri", status: 200, body: func(i string) string { return `{"issuer":"` + i + `","jwks_uri":"http://k/jwks"}` }, wantErr: oidc.ErrDiscovery},
		{name: "http jwks_uri allowed in tests", status: 200, insec: true, body: func(i string) string { return `{"issuer":"` + i + `","jwks_uri":"http://k/jwks"}` }},
		{name: "too large", status: 200, body: func(i string) string {
			return `{"issuer":"` + i + `","jwks_uri":"https://k","x":"` + strings.Repeat("a", oidc.MaxDiscoveryBytes) + `"}`
		}, wantErr: oidc.ErrDiscovery},
		{name: "extra members skipped", status: 200, body: func(i string) string {
			return `{"issuer":"` + i + `","jwks_uri":"https://k","authorization_endpoint":"https://a","claims_supported":["sub"]}`
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var issuer string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body(issuer)))
			}))
			t.Cleanup(srv.Close)
			issuer = srv.URL
			_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: issuer, Client: srv.Client(), InsecureAllowHTTP: tt.insec})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestDiscoverContext: the caller's context and the timeout bound the
// request, and the cause stays visible to errors.Is.
func TestDiscoverContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := oidc.Discover(ctx, oidc.DiscoveryConfig{Issuer: srv.URL, Client: srv.Client()})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, oidc.ErrDiscovery)

	_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.URL, Client: srv.Client(), Timeout: time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestDiscoverSizeBoundary: a document of exactly MaxDiscoveryBytes is read;
// one byte more is refused.
func TestDiscoverSizeBoundary(t *testing.T) {
	for _, tt := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{name: "at the limit", size: oidc.MaxDiscoveryBytes},
		{name: "one byte over", size: oidc.MaxDiscoveryBytes + 1, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var issuer string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				doc := `{"issuer":"` + issuer + `","jwks_uri":"https://k","x":"`
				doc += strings.Repeat("a", tt.size-len(doc)-2) + `"}`
				_, _ = w.Write([]byte(doc))
			}))
			t.Cleanup(srv.Close)
			issuer = srv.URL
			_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: issuer, Client: srv.Client()})
			if tt.wantErr {
				require.ErrorIs(t, err, oidc.ErrDiscovery)
				return
			}
			require.NoError(t, err)
		})
	}
}

// roundTripper answers every request with fn.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDiscoverDefaultTimeout: a zero Timeout bounds the request with
// DefaultDiscoveryTimeout (exact inside a synctest bubble).
func TestDiscoverDefaultTimeout(t *testing.T) {
	assert.Equal(t, 10*time.Second, oidc.DefaultDiscoveryTimeout)
	assert.Equal(t, 64<<10, oidc.MaxDiscoveryBytes)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var deadline time.Time
		client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			deadline, _ = r.Context().Deadline()
			<-r.Context().Done()
			return nil, r.Context().Err()
		})}
		_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: "https://issuer.test", Client: client})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, oidc.DefaultDiscoveryTimeout, deadline.Sub(start))
	})
}

// TestDiscoverRefusesHTTPIssuer: an http issuer is refused unless the test
// says InsecureAllowHTTP; no request (and no bearer token) leaves.
func TestDiscoverRefusesHTTPIssuer(t *testing.T) {
	var got int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got++
		_, _ = w.Write([]byte(`{"issuer":"http://` + r.Host + `","jwks_uri":"http://` + r.Host + `/k"}`))
	}))
	t.Cleanup(srv.Close)
	bearer := func(context.Context) (string, error) { return "secret", nil }
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.URL, BearerToken: bearer})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Zero(t, got)
	_, err = oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: srv.URL, BearerToken: bearer, InsecureAllowHTTP: true})
	require.NoError(t, err)
	assert.Equal(t, 1, got)
}

// FuzzParseMetadata: any input either parses into metadata or is refused
// with an error matching ErrMalformedDocument; nothing panics, and a document that parses parses
// the same way twice.
func FuzzParseMetadata(f *testing.F) {
	for _, seed := range []string{
		`{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`,
		`{"issuer":"https://eastus.oic.prod-aks.azure.com/t/c/","jwks_uri":"https://eastus.oic.prod-aks.azure.com/t/c/openid/v1/jwks"}`,
		`{"issuer":"a","issuer":"b"}`,
		`{"Issuer":"a","issuer":"b"}`,
		`{"issuer":1}`,
		`{"jwks_uri":["x"]}`,
		`{"response_types_supported":"id_token"}`,
		`{"x":{"y":[1,2,{"z":null}]},"issuer":"a"}`,
		`{"issuer":"\ud800"}`,
		"{\"issuer\":\"\xff\"}",
		`[]`,
		``,
		`{"issuer":"a"} trailing`,
		strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		md, err := oidc.ParseMetadata(doc)
		if err != nil {
			if !errors.Is(err, oidc.ErrMalformedDocument) || !strings.HasPrefix(err.Error(), "oidc: discovery document ") {
				t.Fatalf("error %T: %v", err, err)
			}
			if md != nil {
				t.Fatal("metadata returned with an error")
			}
			return
		}
		again, err := oidc.ParseMetadata(doc)
		if err != nil || again.Issuer != md.Issuer || again.JWKSURI != md.JWKSURI || len(again.SigningAlgs) != len(md.SigningAlgs) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}

// TestParseMetadataSizeLimit: a document of exactly MaxDiscoveryBytes
// parses; one byte more is refused before it is read.
func TestParseMetadataSizeLimit(t *testing.T) {
	body := `{"issuer":"https://a"}`
	doc := body + strings.Repeat(" ", oidc.MaxDiscoveryBytes-len(body))
	if _, err := oidc.ParseMetadata([]byte(doc)); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if _, err := oidc.ParseMetadata([]byte(doc + " ")); !errors.Is(err, oidc.ErrMalformedDocument) {
		t.Fatalf("over the limit: %v", err)
	}
}
