package httpget_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/httpget"
)

// TestRedirects: redirects to https are followed up to MaxRedirects; a
// redirect to plain http is refused, so the bearer token never travels in
// clear text.
func TestRedirects(t *testing.T) {
	var plainGot string
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainGot = r.Header.Get("Authorization")
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
		default:
			_, _ = w.Write([]byte("keys"))
		}
	}))
	t.Cleanup(srv.Close)
	bearer := func(context.Context) (string, error) { return "secret", nil }
	tests := []struct {
		name      string
		path      string
		allowHTTP bool
		wantErr   bool
	}{
		{name: "https to https", path: "/to-https"},
		{name: "https to http refused", path: "/to-http", wantErr: true},
		{name: "https to http allowed in tests", path: "/to-http", allowHTTP: true},
		{name: "redirect loop", path: "/loop", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainGot = ""
			resp, fail := httpget.Do(t.Context(), httpget.Request{
				URL: srv.URL + tt.path, Client: srv.Client(), Accept: "application/json",
				Bearer: bearer, Timeout: 5 * time.Second, MaxBytes: 100, AllowHTTP: tt.allowHTTP,
			})
			if tt.wantErr {
				require.NotNil(t, fail)
				assert.Nil(t, resp)
				assert.Empty(t, plainGot, "nothing reached the plain server")
				return
			}
			require.Nil(t, fail)
			assert.Equal(t, "keys", string(resp.Body))
		})
	}
	// The caller's client is not changed.
	assert.Nil(t, srv.Client().CheckRedirect)
}

func TestSizeLimit(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("12345")) }))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		limit   int
		wantErr bool
	}{{5, false}, {4, true}} {
		_, fail := httpget.Do(t.Context(), httpget.Request{URL: srv.URL, Client: srv.Client(), Timeout: 5 * time.Second, MaxBytes: tt.limit})
		if tt.wantErr {
			require.NotNil(t, fail)
			var tl *httpget.TooLargeError
			require.ErrorAs(t, fail.Err, &tl)
			continue
		}
		require.Nil(t, fail)
	}
	assert.Equal(t, "oidc: discovery at https://x: boom: too large", httpget.Describe("oidc", "discovery at", "https://x", "boom", errs.New("jwks", "too large")))
}

// TestBodyCutByTimeout: a body still arriving when the timeout fires is
// reported as a timeout (matching context.DeadlineExceeded), never as a
// short document.
func TestBodyCutByTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"keys":[`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	resp, fail := httpget.Do(t.Context(), httpget.Request{
		URL: srv.URL, Client: srv.Client(), Timeout: 100 * time.Millisecond, MaxBytes: 1000,
	})
	require.Nil(t, resp)
	require.NotNil(t, fail)
	assert.Equal(t, "reading the body", fail.Reason)
	require.ErrorIs(t, fail.Err, context.DeadlineExceeded)
	var timeout *httpget.TimeoutError
	require.ErrorAs(t, fail.Err, &timeout)
	assert.Equal(t, 100*time.Millisecond, timeout.After)
}

// TestStatusText: the server's status text is cut to MaxStatusText bytes of
// printable ASCII, and the code appears once.
func TestStatusText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		status string
		want   string
	}{
		{name: "standard", code: 404, status: "404 Not Found", want: "404 Not Found"},
		{name: "no text", code: 500, status: "500", want: "500"},
		{name: "control characters", code: 503, status: "503 Down\x1b[31m\r\nX-Injected: 1", want: "503 Down[31mX-Injected: 1"},
		{name: "long", code: 500, status: "500 " + strings.Repeat("a", 10000), want: "500 " + strings.Repeat("a", httpget.MaxStatusText-1) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, httpget.StatusLine(tc.code, tc.status))
		})
	}
}
