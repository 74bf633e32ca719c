package registrytoken_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/registrytoken"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

func TestNewRefusesConfig(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		name  string
		edit  func(*registrytoken.Config)
		field string
	}{
		{name: "zero value", edit: func(cfg *registrytoken.Config) { *cfg = registrytoken.Config{} }, field: "Config.Issuer"},
		{name: "no service", edit: func(cfg *registrytoken.Config) { cfg.Service = "" }, field: "Config.Service"},
		{name: "no signer", edit: func(cfg *registrytoken.Config) { cfg.Signer = nil }, field: "Config.Signer"},
		{name: "no verify", edit: func(cfg *registrytoken.Config) { cfg.Check.Verify = nil }, field: "Config.Check.Verify"},
		{name: "no audience", edit: func(cfg *registrytoken.Config) { cfg.Check.Audience = "" }, field: "Config.Check.Audience"},
		{name: "lifetime too short", edit: func(cfg *registrytoken.Config) { cfg.Lifetime = registrytoken.MinLifetime - time.Second }, field: "Config.Lifetime"},
		{name: "lifetime too long", edit: func(cfg *registrytoken.Config) { cfg.Lifetime = registrytoken.MaxLifetime + time.Second }, field: "Config.Lifetime"},
		{name: "rule without namespace", edit: func(cfg *registrytoken.Config) { cfg.Rules[1].Namespace = "" }, field: "Config.Rules[1].Namespace"},
		{name: "rule without service account", edit: func(cfg *registrytoken.Config) { cfg.Rules[0].ServiceAccount = "" }, field: "Config.Rules[0].ServiceAccount"},
		{name: "rule without repositories", edit: func(cfg *registrytoken.Config) { cfg.Rules[0].Repositories = nil }, field: "Config.Rules[0].Repositories"},
		{name: "bad pattern", edit: func(cfg *registrytoken.Config) { cfg.Rules[0].Repositories = []string{"team/["} }, field: "Config.Rules[0].Repositories[0]"},
		{name: "empty pattern", edit: func(cfg *registrytoken.Config) { cfg.Rules[0].Repositories = []string{""} }, field: "Config.Rules[0].Repositories[0]"},
		{name: "unknown action", edit: func(cfg *registrytoken.Config) { cfg.Rules[1].Actions = []string{"pull", "admin"} }, field: "Config.Rules[1].Actions[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := c.config(t)
			tt.edit(&cfg)
			_, err := registrytoken.New(cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "registrytoken."+tt.field, ce.Field)
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c := newCluster(t)
	cfg := c.config(t)
	cfg.Rules = nil
	s, err := registrytoken.New(cfg)
	require.NoError(t, err, "no rules is valid: it denies every scope")
	kid, err := jwks.Thumbprint(cfg.Signer.Public())
	require.NoError(t, err)
	assert.Equal(t, kid, s.KeyID(), "the key ID defaults to the RFC 7638 thumbprint")
	tok, err := s.Issue(context.Background(), registrytoken.Request{
		Service: testService, ServiceAccountToken: c.mint(t, "team", "app", "pod", testAudience, time.Hour),
	})
	require.NoError(t, err, "a request without scopes (docker login) gets a token granting nothing")
	assert.Equal(t, registrytoken.DefaultLifetime, tok.Expiry.Sub(tok.IssuedAt))
	assert.Empty(t, tok.Access)

	for _, life := range []time.Duration{registrytoken.MinLifetime, registrytoken.MaxLifetime} {
		cfg.Lifetime = life
		_, err := registrytoken.New(cfg)
		require.NoError(t, err, "a lifetime of %v is within the bounds", life)
	}
}

// payload is a registry token's claims as the registry reads them.
type payload struct {
	Iss    string                 `json:"iss"`
	Sub    string                 `json:"sub"`
	Aud    []string               `json:"aud"`
	Exp    int64                  `json:"exp"`
	Nbf    int64                  `json:"nbf"`
	Iat    int64                  `json:"iat"`
	Jti    string                 `json:"jti"`
	Access []registrytoken.Access `json:"access"`
}

// decode checks raw's signature with pub and returns its header and claims.
func decode(t *testing.T, raw string, pub *ecdsa.PublicKey) (map[string]string, payload) {
	t.Helper()
	parts := strings.Split(raw, ".")
	require.Len(t, parts, 3)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	require.NoError(t, jws.Verify("ES256", pub, parts[0]+"."+parts[1], sig))
	var h map[string]string
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(hb, &h))
	var p payload
	pb, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(pb, &p))
	return h, p
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestServeHTTP(t *testing.T) {
	c := newCluster(t)
	app := c.mint(t, "team", "app", "pod", testAudience, time.Hour)
	builder := c.mint(t, "team", "builder", "pod", testAudience, time.Hour)
	other := c.mint(t, "other", "app", "pod", testAudience, time.Hour)
	podless := c.mint(t, "team", "app", "", testAudience, time.Hour)
	otherAud := c.mint(t, "team", "app", "pod", "vault", time.Hour)
	short := c.mint(t, "team", "app", "pod", testAudience, 10*time.Minute)
	const pull = "service=" + testService + "&scope=repository:team/app:pull"
	tests := []struct {
		name   string
		method string
		query  string
		auth   []string
		user   string // Config.Username
		status int
		sub    string
		access []registrytoken.Access
		life   time.Duration // Config.Lifetime
		ttl    time.Duration
		error  string
	}{
		{name: "pull with the pass-through credential", query: pull, auth: []string{basic("ksa", app)}, status: 200,
			sub: "system:serviceaccount:team:app", access: []registrytoken.Access{{Type: "repository", Name: "team/app", Actions: []string{"pull"}}}},
		{name: "bearer", query: pull, auth: []string{"Bearer " + app}, status: 200,
			sub: "system:serviceaccount:team:app", access: []registrytoken.Access{{Type: "repository", Name: "team/app", Actions: []string{"pull"}}}},
		{name: "configured username", query: pull, auth: []string{basic("ksa", app)}, user: "ksa", status: 200,
			sub: "system:serviceaccount:team:app", access: []registrytoken.Access{{Type: "repository", Name: "team/app", Actions: []string{"pull"}}}},
		{name: "push asked, pull granted", query: "service=" + testService + "&scope=repository:team/app:pull,push", auth: []string{basic("x", app)}, status: 200,
			sub: "system:serviceaccount:team:app", access: []registrytoken.Access{{Type: "repository", Name: "team/app", Actions: []string{"pull"}}}},
		{name: "builder pushes, catalog dropped", query: "service=" + testService + "&scope=repository:team/base:pull,push+registry:catalog:*", auth: []string{basic("x", builder)}, status: 200,
			sub: "system:serviceaccount:team:builder", access: []registrytoken.Access{{Type: "repository", Name: "team/base", Actions: []string{"pull", "push"}}}},
		{name: "token life caps the registry token", query: pull, auth: []string{basic("x", short)}, status: 200,
			sub: "system:serviceaccount:team:app", access: []registrytoken.Access{{Type: "repository", Name: "team/app", Actions: []string{"pull"}}}, life: registrytoken.MaxLifetime, ttl: 9 * time.Minute},
		{name: "another namespace", query: pull, auth: []string{basic("x", other)}, status: 403, error: "access denied"},
		{name: "another repository", query: "service=" + testService + "&scope=repository:team/other:pull", auth: []string{basic("x", app)}, status: 403, error: "access denied"},
		{name: "no credential", query: pull, status: 401, error: "unauthenticated token request"},
		{name: "two credentials", query: pull, auth: []string{basic("x", app), basic("x", app)}, status: 401, error: "unauthenticated token request"},
		{name: "another username", query: pull, auth: []string{basic("other", app)}, user: "ksa", status: 401, error: "unauthenticated token request"},
		{name: "no password", query: pull, auth: []string{basic("ksa", "")}, status: 401, error: "unauthenticated token request"},
		{name: "not base64", query: pull, auth: []string{"Basic !!"}, status: 401, error: "unauthenticated token request"},
		{name: "other scheme", query: pull, auth: []string{"Digest " + app}, status: 401, error: "unauthenticated token request"},
		{name: "token not bound to a pod", query: pull, auth: []string{basic("x", podless)}, status: 401, error: "service account token refused"},
		{name: "token for another audience", query: pull, auth: []string{basic("x", otherAud)}, status: 401, error: "service account token refused"},
		{name: "not a token", query: pull, auth: []string{basic("x", "secret-not-a-jwt")}, status: 401, error: "service account token refused"},
		{name: "another service", query: "service=other&scope=repository:team/app:pull", auth: []string{basic("x", app)}, status: 400, error: "names another registry"},
		{name: "malformed scope", query: "service=" + testService + "&scope=repository:Team:pull", auth: []string{basic("x", app)}, status: 400, error: "malformed scope"},
		{name: "query too large", query: pull + "&x=" + strings.Repeat("a", registrytoken.MaxQueryBytes), auth: []string{basic("x", app)}, status: 400, error: "over 8192 bytes"},
		{name: "header at the limit", query: pull, auth: []string{"Bearer " + strings.Repeat("a", registrytoken.MaxAuthorizationBytes-len("Bearer "))}, status: 401, error: "service account token refused"},
		{name: "header too large", query: pull, auth: []string{"Bearer " + strings.Repeat("a", registrytoken.MaxAuthorizationBytes)}, status: 400, error: "too large"},
		{name: "POST", method: http.MethodPost, query: pull, auth: []string{basic("x", app)}, status: 405, error: "only GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := c.config(t)
			cfg.Username = tt.user
			cfg.Lifetime = tt.life
			s, err := registrytoken.New(cfg)
			require.NoError(t, err)
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			r := httptest.NewRequest(method, "/token?"+tt.query, nil)
			for _, a := range tt.auth {
				r.Header.Add("Authorization", a)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			require.Equal(t, tt.status, w.Code, w.Body.String())
			assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
			for _, tok := range []string{app, builder, other, podless, otherAud, short} {
				assert.NotContains(t, w.Body.String(), tok[strings.LastIndexByte(tok, '.'):], "the answer quotes a token")
			}
			if tt.error != "" {
				var body map[string]string
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
				assert.Contains(t, body["error"], tt.error)
				if tt.status == 401 {
					assert.Equal(t, `Basic realm="registry.example"`, w.Header().Get("WWW-Authenticate"))
				}
				return
			}
			var resp registrytoken.Response
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
			assert.Equal(t, resp.Token, resp.AccessToken)
			h, p := decode(t, resp.Token, cfg.Signer.Public().(*ecdsa.PublicKey))
			assert.Equal(t, map[string]string{"alg": "ES256", "kid": s.KeyID(), "typ": "JWT"}, h)
			ttl := tt.ttl
			if ttl == 0 {
				ttl = registrytoken.DefaultLifetime
			}
			now := t0.Add(time.Minute).Unix()
			assert.Equal(t, payload{
				Iss: "ksa-registry-token", Sub: tt.sub, Aud: []string{testService},
				Exp: now + int64(ttl/time.Second), Nbf: now, Iat: now, Jti: p.Jti, Access: tt.access,
			}, p)
			assert.Len(t, p.Jti, 26)
			assert.Equal(t, int64(ttl/time.Second), resp.ExpiresIn)
			assert.Equal(t, t0.Add(time.Minute).UTC().Format(time.RFC3339), resp.IssuedAt)
		})
	}
}

func TestIssueErrors(t *testing.T) {
	c := newCluster(t)
	cfg := c.config(t)
	s, err := registrytoken.New(cfg)
	require.NoError(t, err)
	_, err = s.Issue(context.Background(), registrytoken.Request{Service: testService, ServiceAccountToken: c.mint(t, "team", "app", "pod", "vault", time.Hour)})
	require.ErrorIs(t, err, registrytoken.ErrTokenRefused)
	require.ErrorIs(t, err, credprovider.ErrTokenRefused)
	require.ErrorIs(t, err, tokens.ErrAudienceMismatch, "the verifier's reason is kept for the caller")
	_, err = s.Issue(context.Background(), registrytoken.Request{Service: testService})
	require.ErrorIs(t, err, registrytoken.ErrUnauthenticated)
	sc, err := registrytoken.ParseScope("repository:team/app:delete")
	require.NoError(t, err)
	_, err = s.Issue(context.Background(), registrytoken.Request{Service: testService, Scopes: []registrytoken.Scope{sc},
		ServiceAccountToken: c.mint(t, "team", "app", "pod", testAudience, time.Hour)})
	require.ErrorIs(t, err, registrytoken.ErrDenied)
	assert.Equal(t, "registrytoken: access denied: no rule grants system:serviceaccount:team:app the scopes asked", err.Error())
}

func TestIssueRefusesTokenPastItsExpiry(t *testing.T) {
	c := newCluster(t)
	cfg := c.config(t)
	// the verifier's clock (a minute past t0, within its leeway) accepts a
	// token the service's clock sees expired
	cfg.Now = func() time.Time { return t0.Add(11 * time.Minute) }
	s, err := registrytoken.New(cfg)
	require.NoError(t, err)
	_, err = s.Issue(context.Background(), registrytoken.Request{Service: testService,
		ServiceAccountToken: c.mint(t, "team", "app", "pod", testAudience, 10*time.Minute)})
	require.ErrorIs(t, err, registrytoken.ErrTokenRefused)
	assert.Equal(t, "registrytoken: service account token refused: the service account token has expired", err.Error())
}

func TestRuleActions(t *testing.T) {
	c := newCluster(t)
	app := c.mint(t, "team", "app", "pod", testAudience, time.Hour)
	tests := []struct {
		name  string
		rule  registrytoken.Rule
		scope string
		want  []string
	}{
		{name: "default is pull", rule: registrytoken.Rule{Namespace: "team", ServiceAccount: "app", Repositories: []string{"a"}}, scope: "repository:a:pull,push,delete,*", want: []string{"pull"}},
		{name: "star grants every named action", rule: registrytoken.Rule{Namespace: "*", ServiceAccount: "*", Repositories: []string{"a"}, Actions: []string{"*"}}, scope: "repository:a:pull,push,*", want: []string{"pull", "push", "*"}},
		{name: "star asked, not granted by push", rule: registrytoken.Rule{Namespace: "team", ServiceAccount: "*", Repositories: []string{"a"}, Actions: []string{"push"}}, scope: "repository:a:*,push", want: []string{"push"}},
		{name: "pattern does not cross a slash", rule: registrytoken.Rule{Namespace: "team", ServiceAccount: "app", Repositories: []string{"team/*"}}, scope: "repository:team/a/b:pull"},
		{name: "other service account", rule: registrytoken.Rule{Namespace: "team", ServiceAccount: "builder", Repositories: []string{"a"}}, scope: "repository:a:pull"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := c.config(t)
			cfg.Rules = []registrytoken.Rule{tt.rule}
			s, err := registrytoken.New(cfg)
			require.NoError(t, err)
			sc, err := registrytoken.ParseScope(tt.scope)
			require.NoError(t, err)
			tok, err := s.Issue(context.Background(), registrytoken.Request{Service: testService, ServiceAccountToken: app, Scopes: []registrytoken.Scope{sc}})
			if tt.want == nil {
				require.ErrorIs(t, err, registrytoken.ErrDenied)
				return
			}
			require.NoError(t, err)
			require.Len(t, tok.Access, 1)
			assert.Equal(t, tt.want, tok.Access[0].Actions)
		})
	}
}

func TestJWKS(t *testing.T) {
	c := newCluster(t)
	s, err := registrytoken.New(c.config(t))
	require.NoError(t, err)
	doc, err := s.JWKS()
	require.NoError(t, err)
	set, err := jwks.ParseSet(doc, jwks.ParseOptions{})
	require.NoError(t, err)
	keys := set.Keys
	require.Len(t, keys, 1)
	assert.Equal(t, s.KeyID(), keys[0].KeyID)
}
