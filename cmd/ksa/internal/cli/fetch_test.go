package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGet: redirects to https are followed up to maxRedirects, a redirect
// to plain http is refused, the body is bounded, the status text quoted is
// bounded printable ASCII, and a server that never answers times out.
func TestGet(t *testing.T) {
	var plainHit bool
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHit = true
		_, _ = w.Write([]byte("keys"))
	}))
	t.Cleanup(plain.Close)
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-http":
			http.Redirect(w, r, plain.URL+"/keys", http.StatusFound)
		case "/to-https":
			http.Redirect(w, r, srv.URL+"/keys", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, srv.URL+"/loop", http.StatusFound)
		case "/status":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusTeapot)
		case "/hang":
			<-r.Context().Done()
		default:
			_, _ = w.Write([]byte("keys"))
		}
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name       string
		path       string
		maxBytes   int
		timeout    time.Duration
		wantBody   string
		wantStatus int
		wantReason string
	}{
		{name: "plain", path: "/keys", maxBytes: 4, wantBody: "keys"},
		{name: "https to https", path: "/to-https", maxBytes: 4, wantBody: "keys"},
		{name: "https to http refused", path: "/to-http", maxBytes: 4, wantReason: "request failed"},
		{name: "redirect loop", path: "/loop", maxBytes: 4, wantReason: "request failed"},
		{name: "one byte over the limit", path: "/keys", maxBytes: 3, wantStatus: 200, wantReason: "body over the 3-byte limit"},
		{name: "status", path: "/status", maxBytes: 4, wantStatus: 418, wantReason: "unexpected status 418 I'm a teapot"},
		{name: "timeout", path: "/hang", maxBytes: 4, timeout: time.Millisecond, wantReason: "timed out after 1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plainHit = false
			if tc.timeout == 0 {
				tc.timeout = 10 * time.Second
			}
			resp, f := get(t.Context(), getRequest{URL: srv.URL + tc.path, Client: srv.Client(), Accept: "application/json",
				Timeout: tc.timeout, MaxBytes: tc.maxBytes})
			if tc.wantReason != "" {
				require.NotNil(t, f)
				assert.Nil(t, resp)
				assert.Equal(t, tc.wantStatus, f.Status)
				assert.Equal(t, tc.wantReason, f.Reason)
				assert.False(t, plainHit, "nothing reached the plain server")
				return
			}
			require.Nil(t, f)
			assert.Equal(t, tc.wantBody, string(resp.Body))
		})
	}
	assert.Nil(t, srv.Client().CheckRedirect, "the caller's client is not changed")
}

func TestStatusLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string
		want   string
	}{
		{name: "usual", status: "404 Not Found", want: "404 Not Found"},
		{name: "controls dropped", status: "404 Not\x1b[2J Found\r\n", want: "404 Not[2J Found"},
		{name: "long text cut", status: "500 " + strings.Repeat("x", 100), want: "500 " + strings.Repeat("x", 63) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := 404
			if strings.HasPrefix(tc.status, "500") {
				code = 500
			}
			assert.Equal(t, tc.want, statusLine(code, tc.status))
		})
	}
}
