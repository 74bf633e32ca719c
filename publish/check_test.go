package publish_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
)

// issuerServer serves an issuer rendered for its own URL under /c1,
// through edit (which may change any response), over TLS.
func issuerServer(t *testing.T, keys []jwks.Key, edit func(w http.ResponseWriter, r *http.Request) bool) (*httptest.Server, string) {
	var docs *oidc.Documents
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if edit != nil && edit(w, r) {
			return
		}
		set := func(name, value string) {
			if w.Header().Get(name) == "" {
				w.Header().Set(name, value)
			}
		}
		set("Cache-Control", publish.CacheControl)
		switch r.URL.Path {
		case "/c1" + oidc.DiscoveryPath:
			set("Content-Type", oidc.DiscoveryContentType)
			_, _ = w.Write(docs.Discovery)
		case "/c1" + oidc.JWKSPath:
			set("Content-Type", oidc.JWKSContentType)
			_, _ = w.Write(docs.JWKS)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	issuer := srv.URL + "/c1"
	var err error
	docs, err = oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: oidc.JWKSURL(issuer)}, keys)
	require.NoError(t, err)
	return srv, issuer
}

func TestCheck(t *testing.T) {
	rsa, ec := testKey(t, "rsa"), testKey(t, "ec")
	for _, tc := range []struct {
		name  string
		keys  []jwks.Key
		edit  func(w http.ResponseWriter, r *http.Request) bool
		want  []string // the findings' codes, in order
		ok    bool
		issue string // appended to the issuer checked
	}{
		{name: "as kube-apiserver serves it", keys: []jwks.Key{rsa}, ok: true},
		{name: "ECDSA only: Entra ID refuses", keys: []jwks.Key{ec}, want: []string{publish.CodeDiscoveryNoRS256, publish.CodeNoRS256}},
		{name: "a trailing slash", keys: []jwks.Key{rsa}, issue: "/", want: []string{publish.CodeIssuerTrailingSlash}},
		{name: "not public", keys: []jwks.Key{rsa}, want: []string{publish.CodeDiscoveryUnreachable},
			edit: func(w http.ResponseWriter, r *http.Request) bool { w.WriteHeader(http.StatusForbidden); return true }},
		{name: "key set missing, no cache headers", keys: []jwks.Key{rsa}, want: []string{publish.CodeKeySetUnreachable},
			edit: func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasSuffix(r.URL.Path, oidc.JWKSPath) {
					http.NotFound(w, r)
					return true
				}
				return false
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, issuer := issuerServer(t, tc.keys, tc.edit)
			rep := publish.Check(context.Background(), issuer+tc.issue, publish.CheckOptions{HTTPClient: srv.Client()})
			var codes []string
			for _, f := range rep.Findings {
				codes = append(codes, f.Code)
				assert.NotEmpty(t, f.Fix, "%s has a fix", f.Code)
			}
			assert.Equal(t, tc.want, codes)
			assert.Equal(t, tc.ok, rep.OK())
		})
	}
}

func TestCheckNotHTTPS(t *testing.T) {
	rep := publish.Check(context.Background(), "http://oidc.example.com", publish.CheckOptions{})
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, publish.CodeIssuerNotHTTPS, rep.Findings[0].Code)
	assert.Equal(t, 1, rep.Errors())
}

func TestCheckCacheHeaders(t *testing.T) {
	rsa := testKey(t, "rsa")
	srv, issuer := issuerServer(t, []jwks.Key{rsa}, func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Cache-Control", "max-age=172800")
		w.Header().Set("Content-Type", "text/plain")
		return false
	})
	rep := publish.Check(context.Background(), issuer, publish.CheckOptions{HTTPClient: srv.Client(), Now: func() time.Time { return time.Unix(0, 0) }})
	assert.True(t, rep.OK(), "warnings only")
	var problems []string
	for _, f := range rep.Findings {
		problems = append(problems, f.Problem)
	}
	assert.Contains(t, problems, "the discovery document may be cached for 2d (max-age=172800): a new key stays unknown that long after a rotation")
}
