package publish_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/publishtest"
)

// failingStore is a store whose reads fail.
type failingStore struct{ *publishtest.Store }

func (failingStore) Get(context.Context, string, int64) ([]byte, publish.Version, error) {
	return nil, "", errors.New("connection reset")
}

func TestCheckPublished(t *testing.T) {
	const issuer = "https://oidc.example.com/cluster-1"
	doc := func(iss string) string {
		return `{"issuer":"` + iss + `","jwks_uri":"` + iss + `/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
	}
	tests := []struct {
		name          string
		published     string // "" for nothing published
		failing       bool
		want          bool
		wantKind      error
		wantPublished string
		wantSlash     bool
		wantUnparsed  bool
	}{
		{name: "nothing published", want: false},
		{name: "the same issuer", published: doc(issuer), want: true},
		{name: "another issuer", published: doc("https://oidc.example.com/cluster-2"), wantKind: publish.ErrOtherIssuer, wantPublished: "https://oidc.example.com/cluster-2"},
		{name: "a trailing slash apart", published: doc(issuer + "/"), wantKind: publish.ErrOtherIssuer, wantPublished: issuer + "/", wantSlash: true},
		{name: "not a discovery document", published: "<html>", wantKind: publish.ErrOtherIssuer, wantUnparsed: true},
		{name: "the store fails", failing: true, wantKind: publish.ErrStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := publishtest.NewStore("cluster-1")
			if tt.published != "" {
				require.NoError(t, mem.Put(context.Background(), publish.Object{Name: publish.DiscoveryName, Data: []byte(tt.published)}))
			}
			var store publish.Store = mem
			if tt.failing {
				store = failingStore{mem}
			}
			got, err := publish.CheckPublished(context.Background(), store, issuer)
			if tt.wantKind == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.ErrorIs(t, err, tt.wantKind)
			assert.False(t, got)
			var ie *publish.IssuerError
			if !errors.Is(err, publish.ErrOtherIssuer) {
				assert.False(t, errors.As(err, &ie))
				return
			}
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tt.wantPublished, ie.Published)
			assert.Equal(t, issuer, ie.Issuer)
			assert.Equal(t, tt.wantSlash, ie.TrailingSlash())
			assert.Equal(t, tt.wantUnparsed, ie.Err != nil)
			assert.Contains(t, err.Error(), "s3://bucket/cluster-1")
		})
	}
}

func TestLocationPublicURL(t *testing.T) {
	tests := []struct {
		location string
		want     string
	}{
		{location: "https://acct.blob.core.windows.net/oidc/cluster-1", want: "https://acct.blob.core.windows.net/oidc/cluster-1"},
		{location: "https://acct.blob.core.windows.net/oidc", want: "https://acct.blob.core.windows.net/oidc"},
		{location: "gs://bucket/a/b", want: "https://storage.googleapis.com/bucket/a/b"},
		{location: "gs://bucket", want: "https://storage.googleapis.com/bucket"},
		{location: "s3://bucket/cluster-1", want: ""},
		{location: "/srv/www", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.location, func(t *testing.T) {
			loc, err := publish.ParseLocation(tt.location)
			require.NoError(t, err)
			assert.Equal(t, tt.want, loc.PublicURL())
		})
	}
}

// Before publishing, find out whether the store already publishes
// another issuer, which publishing would replace.
func ExampleCheckPublished() {
	store := publishtest.NewStore("cluster-1")
	ctx := context.Background()
	_ = store.Put(ctx, publish.Object{Name: publish.DiscoveryName, Data: []byte(`{"issuer":"https://oidc.example.com/cluster-1/","jwks_uri":"https://oidc.example.com/cluster-1/openid/v1/jwks"}`)})

	_, err := publish.CheckPublished(ctx, store, "https://oidc.example.com/cluster-1")
	var ie *publish.IssuerError
	if errors.As(err, &ie) {
		fmt.Println("published:", ie.Published)
		fmt.Println("a trailing slash apart:", ie.TrailingSlash())
	}
	// Output:
	// published: https://oidc.example.com/cluster-1/
	// a trailing slash apart: true
}

// accessStore is a store whose preflight says access, or fails.
type accessStore struct {
	*publishtest.Store
	access publish.Access
	fail   bool
}

func (s accessStore) Preflight(context.Context) (publish.Preflight, error) {
	if s.fail {
		return publish.Preflight{}, &publish.Error{Kind: publish.ErrNoCredentials, What: "no credentials"}
	}
	return publish.Preflight{Access: s.access, AccessFix: "make the bucket public"}, nil
}

func TestPreflightIssuer(t *testing.T) {
	status := 0 // what the public URL answers, 0 for the document
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			http.Error(w, "no", status)
			return
		}
		iss := "https://" + r.Host + "/cluster-1"
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"` + iss + `","jwks_uri":"` + iss + `/openid/v1/jwks"}`))
	}))
	defer srv.Close()
	issuer := srv.URL + "/cluster-1"
	doc := func(iss string) []byte {
		return []byte(`{"issuer":"` + iss + `","jwks_uri":"` + iss + `/openid/v1/jwks"}`)
	}
	tests := []struct {
		name       string
		access     publish.Access
		failing    bool
		published  []byte
		publicURL  string
		read       bool // give the HTTP client
		status     int
		wantKind   error
		wantURL    bool
		wantStatus int
	}{
		{name: "the store fails", failing: true, wantKind: publish.ErrNoCredentials},
		{name: "public", access: publish.AccessPublic},
		{name: "unknown access", access: publish.AccessUnknown},
		{name: "private without a public URL", access: publish.AccessPrivate, wantKind: publish.ErrNotPublic},
		{name: "private, public URL not read", access: publish.AccessPrivate, publicURL: srv.URL, status: http.StatusForbidden},
		{name: "private, public URL serves it", access: publish.AccessPrivate, publicURL: srv.URL, read: true},
		{name: "private, public URL refuses", access: publish.AccessPrivate, publicURL: srv.URL, read: true, status: http.StatusForbidden, wantKind: publish.ErrNotPublic, wantURL: true, wantStatus: http.StatusForbidden},
		{name: "private, nothing published yet", access: publish.AccessPrivate, publicURL: srv.URL, read: true, status: http.StatusNotFound},
		{name: "private, published but not served", access: publish.AccessPrivate, publicURL: srv.URL, read: true, status: http.StatusNotFound, published: doc(issuer), wantKind: publish.ErrNotPublic, wantURL: true, wantStatus: http.StatusNotFound},
		{name: "private, public URL fails", access: publish.AccessPrivate, publicURL: srv.URL, read: true, status: http.StatusInternalServerError, wantKind: publish.ErrNotPublic, wantURL: true, wantStatus: http.StatusInternalServerError},
		{name: "another issuer published", access: publish.AccessPublic, published: doc("https://other.example.com"), wantKind: publish.ErrOtherIssuer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := publishtest.NewStore("cluster-1")
			if tt.published != nil {
				require.NoError(t, mem.Put(context.Background(), publish.Object{Name: publish.DiscoveryName, Data: tt.published}))
			}
			status = tt.status
			opts := publish.PreflightOptions{PublicURL: tt.publicURL}
			if tt.read {
				opts.HTTPClient = srv.Client()
			}
			pf, err := publish.PreflightIssuer(context.Background(), accessStore{Store: mem, access: tt.access, fail: tt.failing}, issuer, opts)
			if tt.wantKind == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.access, pf.Access)
				return
			}
			require.ErrorIs(t, err, tt.wantKind)
			var ae *publish.AccessError
			if !errors.Is(err, publish.ErrNotPublic) {
				return
			}
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "make the bucket public", ae.Fix)
			assert.Equal(t, tt.wantStatus, ae.Status)
			assert.Equal(t, tt.wantURL, ae.URL != "")
			assert.Equal(t, tt.wantURL, ae.Problem != "")
			assert.Contains(t, err.Error(), "not publicly readable")
		})
	}
}

func TestKeySetCopyLacks(t *testing.T) {
	tests := []struct {
		name   string
		copy   publish.KeySetCopy
		listed []string
		want   []string
	}{
		{name: "holds all", copy: publish.KeySetCopy{KeyIDs: []string{"b", "a"}}, listed: []string{"a", "b"}},
		{name: "lacks one", copy: publish.KeySetCopy{KeyIDs: []string{"a", "x"}}, listed: []string{"a", "b"}, want: []string{"b"}},
		{name: "does not parse", copy: publish.KeySetCopy{}, listed: []string{"a", "b"}, want: []string{"a", "b"}},
		{name: "nothing listed", copy: publish.KeySetCopy{KeyIDs: []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.copy.Lacks(tt.listed))
		})
	}
}
