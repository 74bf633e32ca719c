package tokenexchange_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/tokenexchange"
	"github.com/ksa-go/ksa/tokens"
)

var t0 = time.Unix(1_800_000_000, 0)

// endpoint is a token endpoint: it records the form of each request and
// answers with status and body.
type endpoint struct {
	mu     sync.Mutex
	forms  []url.Values
	auth   []string
	status int
	body   string
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	e.mu.Lock()
	e.forms = append(e.forms, r.PostForm)
	e.auth = append(e.auth, r.Header.Get("Authorization"))
	status, body := e.status, e.body
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func newExchanger(t *testing.T, e *endpoint, cfg tokenexchange.Config) *tokenexchange.Exchanger {
	t.Helper()
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	cfg.TokenURL = srv.URL + "/token"
	cfg.Client = srv.Client()
	cfg.Now = func() time.Time { return t0 }
	ex, err := tokenexchange.New(cfg)
	require.NoError(t, err)
	return ex
}

func TestExchange(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		want       *tokenexchange.Token
		wantErr    error
		wantStatus int
	}{
		{name: "issued", status: 200, body: `{"access_token":"reg-tok","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":300,"scope":"pull"}`,
			want: &tokenexchange.Token{AccessToken: "reg-tok", IssuedTokenType: tokenexchange.TokenTypeAccessToken, TokenType: "Bearer", Expiry: t0.Add(5 * time.Minute)}},
		{name: "no expires_in", status: 200, body: `{"access_token":"reg-tok","token_type":"N_A"}`,
			want: &tokenexchange.Token{AccessToken: "reg-tok", TokenType: "N_A"}},
		{name: "refused", status: 400, body: `{"error":"invalid_grant","error_description":"audience not allowed"}`, wantErr: tokenexchange.ErrRefused, wantStatus: 400},
		{name: "refused, not JSON", status: 403, body: `<html>no</html>`, wantErr: tokenexchange.ErrRefused, wantStatus: 403},
		{name: "server error", status: 503, body: `busy`, wantErr: tokenexchange.ErrExchangeFailed},
		{name: "garbage", status: 200, body: `<html>`, wantErr: tokenexchange.ErrBadResponse},
		{name: "no access token", status: 200, body: `{"token_type":"Bearer"}`, wantErr: tokenexchange.ErrBadResponse},
		{name: "negative expires_in", status: 200, body: `{"access_token":"a","expires_in":-5}`, wantErr: tokenexchange.ErrBadResponse},
		{name: "fractional expires_in", status: 200, body: `{"access_token":"a","expires_in":1.5}`, wantErr: tokenexchange.ErrBadResponse},
		{name: "over the size limit", status: 200, body: `{"access_token":"` + strings.Repeat("a", tokenexchange.DefaultMaxResponseBytes) + `"}`, wantErr: tokenexchange.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &endpoint{status: tt.status, body: tt.body}
			ex := newExchanger(t, e, tokenexchange.Config{Audience: "registry.example", Scopes: []string{"repository:team/app:pull", "x"}})
			got, err := ex.Exchange(t.Context(), "the-pods-token")
			require.Len(t, e.forms, 1)
			assert.Equal(t, url.Values{
				"grant_type": {tokenexchange.GrantType}, "subject_token_type": {tokenexchange.TokenTypeJWT},
				"subject_token": {"the-pods-token"}, "audience": {"registry.example"}, "scope": {"repository:team/app:pull x"},
			}, e.forms[0])
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), "the-pods-token")
				assert.Equal(t, 1, strings.Count(err.Error(), "tokenexchange:"), err.Error())
				var re *tokenexchange.RefusedError
				if tt.wantStatus != 0 {
					require.ErrorAs(t, err, &re)
					assert.Equal(t, tt.wantStatus, re.StatusCode)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExchangeRefusedCarriesOAuthError(t *testing.T) {
	e := &endpoint{status: 400, body: `{"error":"invalid_target","error_description":"` + strings.Repeat("d", 1000) + `"}`}
	_, err := newExchanger(t, e, tokenexchange.Config{}).Exchange(t.Context(), "t")
	var re *tokenexchange.RefusedError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "invalid_target", re.Code)
	assert.Len(t, re.Description, tokenexchange.MaxErrorText)
}

func TestExchangeClientAuth(t *testing.T) {
	e := &endpoint{status: 200, body: `{"access_token":"a"}`}
	_, err := newExchanger(t, e, tokenexchange.Config{ClientID: "plugin", ClientSecret: "s:3"}).Exchange(t.Context(), "t")
	require.NoError(t, err)
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth("plugin", "s%3A3")
	assert.Equal(t, req.Header.Get("Authorization"), e.auth[0])
}

// TestExchangeHung: an endpoint that accepts the request and never
// answers ends with the caller's context, not a hang.
func TestExchangeHung(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handler ends
	ex, err := tokenexchange.New(tokenexchange.Config{TokenURL: srv.URL, Client: srv.Client()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ex.Exchange(ctx, "t")
		done <- err
	}()
	<-arrived
	cancel()
	err = <-done
	require.ErrorIs(t, err, tokenexchange.ErrExchangeFailed)
	require.ErrorIs(t, err, context.Canceled)
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  tokenexchange.Config
	}{
		{name: "no URL"},
		{name: "relative", cfg: tokenexchange.Config{TokenURL: "/token"}},
		{name: "http", cfg: tokenexchange.Config{TokenURL: "http://registry.example/token"}},
		{name: "user info", cfg: tokenexchange.Config{TokenURL: "https://u:p@registry.example/token"}},
		{name: "negative limit", cfg: tokenexchange.Config{TokenURL: "https://registry.example/token", MaxResponseBytes: -1}},
		{name: "secret without ID", cfg: tokenexchange.Config{TokenURL: "https://registry.example/token", ClientSecret: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tokenexchange.New(tt.cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.NotContains(t, err.Error(), "u:p")
		})
	}
	_, err := tokenexchange.New(tokenexchange.Config{TokenURL: "http://127.0.0.1:1/token", InsecureAllowHTTP: true})
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, tokenexchange.DefaultTimeout)
	assert.Equal(t, 64<<10, tokenexchange.DefaultMaxResponseBytes)
}

func TestProvider(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key, Now: func() time.Time { return t0 }})
	require.NoError(t, err)
	tok, err := minter.Mint(t.Context(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "team", Name: "puller", UID: "u"}, Audiences: []string{"registry.example"},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"},
	})
	require.NoError(t, err)

	e := &endpoint{status: 200, body: `{"access_token":"reg-tok","expires_in":7200}`}
	ex := newExchanger(t, e, tokenexchange.Config{})
	refuse := errors.New("refused offline")
	tests := []struct {
		name    string
		check   *credprovider.TokenCheck
		req     credprovider.Request
		want    time.Duration
		wantErr error
	}{
		{name: "exchanged, cached until the pod's token expires", req: credprovider.Request{Image: "registry.example/a", ServiceAccountToken: tok.Raw}, want: time.Hour},
		{name: "no token", req: credprovider.Request{Image: "registry.example/a"}, wantErr: credprovider.ErrNoToken},
		{name: "refused offline, never sent", req: credprovider.Request{Image: "registry.example/a", ServiceAccountToken: tok.Raw}, wantErr: refuse,
			check: &credprovider.TokenCheck{Audience: "registry.example", Verify: func(context.Context, string, []string) (*tokens.Result, error) { return nil, refuse }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.forms = nil
			p, err := tokenexchange.Provider(tokenexchange.ProviderConfig{Exchanger: ex, Check: tt.check, Username: "oauth2accesstoken",
				Cache: credprovider.Cache{For: 24 * time.Hour}, Now: func() time.Time { return t0 }})
			require.NoError(t, err)
			resp, err := p.Provide(t.Context(), &tt.req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Empty(t, e.forms, "nothing sent")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.CacheDuration)
			assert.Equal(t, map[string]credprovider.AuthConfig{"registry.example": {Username: "oauth2accesstoken", Password: "reg-tok"}}, resp.Auth)
		})
	}
	_, err = tokenexchange.Provider(tokenexchange.ProviderConfig{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	_, err = tokenexchange.Provider(tokenexchange.ProviderConfig{Exchanger: ex, Check: &credprovider.TokenCheck{}})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}

// An exchange against a token endpoint: the pod's token goes out as
// subject_token, the registry's token comes back.
func ExampleExchanger_Exchange() {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") != tokenexchange.GrantType || r.PostForm.Get("subject_token") == "" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, `{"access_token":"registry-token","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":600}`)
	}))
	defer srv.Close()

	ex, err := tokenexchange.New(tokenexchange.Config{
		TokenURL: srv.URL, Audience: "registry.example", Client: srv.Client(),
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := ex.Exchange(context.Background(), "the pod's token")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.AccessToken, tok.TokenType, tok.Expiry.UTC().Format(time.RFC3339))
	// Output:
	// registry-token Bearer 2027-01-15T08:10:00Z
}
