package admissionauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// TestVerify: a token minted for this webhook, this configuration, the
// accepted caller and the review's group (or all groups) is accepted; each
// other token is refused with its own error.
func TestVerify(t *testing.T) {
	key := testkeys.K8sEC()
	m := minter(t, key)
	other := minter(t, testkeys.Generated("p384"))
	pods := admissionauth.Review{APIVersion: admissionauth.AdmissionV1, UID: "u", Group: ""}
	gmsa := admissionauth.Review{APIVersion: admissionauth.AdmissionV1, UID: "u", Group: "windows.k8s.io"}
	validating := tokens.BoundValidatingWebhookConfiguration
	tests := []struct {
		name      string
		auth      string
		review    admissionauth.Review
		mode      admissionauth.Mode
		clock     time.Time
		wantErr   error
		wantCause error
		wantCode  int
	}{
		{name: "all groups", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", audience, "*"), review: pods},
		{name: "the review's group", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", audience, "windows.k8s.io"), review: gmsa},
		{name: "scheme in any case", auth: "bEARER  " + webhookToken(t, m, validating, "gmsa", audience, "*"), review: pods},
		{name: "no token, required", review: pods, wantErr: admissionauth.ErrNoToken, wantCode: 401},
		{name: "no token, accepted", review: pods, mode: admissionauth.Accept},
		{name: "bad token, accept mode", auth: "Bearer x.y.z", review: pods, mode: admissionauth.Accept,
			wantErr: admissionauth.ErrToken, wantCause: tokens.ErrMalformed, wantCode: 401},
		{name: "basic auth", auth: "Basic dXNlcjpwYXNz", review: pods, wantErr: admissionauth.ErrAuthorization, wantCode: 401},
		{name: "empty bearer", auth: "Bearer  ", review: pods, wantErr: admissionauth.ErrAuthorization, wantCode: 401},
		{name: "two tokens", auth: "Bearer a, Bearer b", review: pods, wantErr: admissionauth.ErrAuthorization, wantCode: 401},
		{name: "another audience", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", "https://other.ksa-system.svc:443/validate", "*"), review: pods,
			wantErr: admissionauth.ErrToken, wantCause: tokens.ErrAudienceMismatch, wantCode: 401},
		{name: "expired", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", audience, "*"), review: pods, clock: now.Add(12 * time.Minute),
			wantErr: admissionauth.ErrToken, wantCause: tokens.ErrExpired, wantCode: 401},
		{name: "another issuer's key", auth: "Bearer " + webhookToken(t, other, validating, "gmsa", audience, "*"), review: pods,
			wantErr: admissionauth.ErrToken, wantCause: tokens.ErrUnknownKeyID, wantCode: 401},
		{name: "another configuration", auth: "Bearer " + webhookToken(t, m, validating, "other", audience, "*"), review: pods,
			wantErr: admissionauth.ErrBinding, wantCode: 403},
		{name: "the mutating configuration of the same name", auth: "Bearer " + webhookToken(t, m, tokens.BoundMutatingWebhookConfiguration, "gmsa", audience, "*"), review: pods,
			wantErr: admissionauth.ErrBinding, wantCode: 403},
		{name: "another group", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", audience, "apps"), review: gmsa,
			wantErr: admissionauth.ErrAPIGroup, wantCode: 403},
		{name: "a group for a core review", auth: "Bearer " + webhookToken(t, m, validating, "gmsa", audience, "windows.k8s.io"), review: pods,
			wantErr: admissionauth.ErrAPIGroup, wantCode: 403},
		{name: "a pod's token", auth: "Bearer " + podToken(t, m), review: pods, wantErr: admissionauth.ErrNotWebhookToken, wantCode: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := tt.clock
			if clock.IsZero() {
				clock = now
			}
			v := verifier(t, validator(t, key, clock, false), tt.mode)
			res, err := v.Verify(t.Context(), tt.auth, tt.review)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.wantCause != nil {
					require.ErrorIs(t, err, tt.wantCause)
				}
				assert.Equal(t, tt.wantCode, admissionauth.StatusCode(err))
				assert.Nil(t, res)
				if _, tok, _ := strings.Cut(tt.auth, " "); strings.TrimSpace(tok) != "" {
					assert.NotContains(t, err.Error(), strings.TrimSpace(tok), "the token is never quoted")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.review, res.Review)
			if tt.auth == "" {
				assert.False(t, res.Authenticated)
				return
			}
			assert.True(t, res.Authenticated)
			assert.Equal(t, admissionauth.Configuration{Kind: validating, Name: "gmsa"}, res.Configuration)
			assert.Equal(t, "gmsa-uid", res.ConfigurationUID)
			assert.Equal(t, caller, res.Token.Identity.ServiceAccount)
		})
	}
}

func podToken(t *testing.T, m *tokens.Minter) string {
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: caller, Audiences: []string{audience},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)
	return tok.Raw
}

// TestVerifyServiceAccount: only the accepted service accounts may call,
// by namespace and name, and by UID when the config gives one.
func TestVerifyServiceAccount(t *testing.T) {
	key := testkeys.K8sEC()
	tok := "Bearer " + webhookToken(t, minter(t, key), tokens.BoundValidatingWebhookConfiguration, "gmsa", audience, "*")
	tests := []struct {
		name    string
		sa      ksa.ServiceAccount
		wantErr error
	}{
		{name: "name", sa: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth"}},
		{name: "name and uid", sa: caller},
		{name: "another uid", sa: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "old"}, wantErr: admissionauth.ErrServiceAccount},
		{name: "another namespace", sa: ksa.ServiceAccount{Namespace: "ksa-system", Name: "webhook-auth"}, wantErr: admissionauth.ErrServiceAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := admissionauth.New(admissionauth.Config{
				Tokens: validator(t, key, now, false).ValidateFor, Audience: audience,
				Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa"}},
				ServiceAccounts: []ksa.ServiceAccount{tt.sa},
			})
			require.NoError(t, err)
			_, err = v.Verify(t.Context(), tok, admissionauth.Review{})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, 403, admissionauth.StatusCode(err))
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestBindingError carries the configuration the token names.
func TestBindingError(t *testing.T) {
	key := testkeys.K8sEC()
	v := verifier(t, validator(t, key, now, false), admissionauth.Require)
	_, err := v.Verify(t.Context(), "Bearer "+webhookToken(t, minter(t, key), tokens.BoundMutatingWebhookConfiguration, "other", audience, "*"), admissionauth.Review{})
	var be *admissionauth.BindingError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, tokens.BoundMutatingWebhookConfiguration, be.Kind)
	assert.Equal(t, "other", be.Name)
	assert.Equal(t, `admissionauth: token bound to another webhook configuration: MutatingWebhookConfiguration "other", this webhook is registered in ValidatingWebhookConfiguration "gmsa"`, err.Error())
}

// TestNew refuses configs that would accept any caller.
func TestNew(t *testing.T) {
	check := validator(t, testkeys.K8sEC(), now, false).ValidateFor
	good := func() admissionauth.Config {
		return admissionauth.Config{Tokens: check, Audience: audience,
			Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa"}},
			ServiceAccounts: []ksa.ServiceAccount{caller}}
	}
	tests := []struct {
		name      string
		mod       func(*admissionauth.Config)
		wantField string
	}{
		{name: "no token check", mod: func(c *admissionauth.Config) { c.Tokens = nil }, wantField: "admissionauth.Config.Tokens"},
		{name: "no audience", mod: func(c *admissionauth.Config) { c.Audience = "" }, wantField: "admissionauth.Config.Audience"},
		{name: "http audience", mod: func(c *admissionauth.Config) { c.Audience = "http://x/validate" }, wantField: "admissionauth.Config.Audience"},
		{name: "no configuration", mod: func(c *admissionauth.Config) { c.Configurations = nil }, wantField: "admissionauth.Config.Configurations"},
		{name: "a pod is no configuration", mod: func(c *admissionauth.Config) { c.Configurations[0].Kind = tokens.BoundPod }, wantField: "admissionauth.Config.Configurations"},
		{name: "bad configuration name", mod: func(c *admissionauth.Config) { c.Configurations[0].Name = "GMSA" }, wantField: "admissionauth.Config.Configurations"},
		{name: "no service account", mod: func(c *admissionauth.Config) { c.ServiceAccounts = nil }, wantField: "admissionauth.Config.ServiceAccounts"},
		{name: "bad service account", mod: func(c *admissionauth.Config) { c.ServiceAccounts[0].Namespace = "" }, wantField: "admissionauth.Config.ServiceAccounts"},
		{name: "unknown mode", mod: func(c *admissionauth.Config) { c.Mode = 7 }, wantField: "admissionauth.Config.Mode"},
		{name: "negative body limit", mod: func(c *admissionauth.Config) { c.MaxRequestBytes = -1 }, wantField: "admissionauth.Config.MaxRequestBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good()
			tt.mod(&cfg)
			_, err := admissionauth.New(cfg)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.wantField, ce.Field)
		})
	}
	v, err := admissionauth.New(good())
	require.NoError(t, err)
	assert.Equal(t, admissionauth.Require, v.Mode(), "the zero Mode requires a token")
	assert.Equal(t, audience, v.Audience())
}

// TestServiceAudience follows kube-apiserver's derivation for
// clientConfig.service.
func TestServiceAudience(t *testing.T) {
	tests := []struct {
		name string
		port int32
		path string
		want string
	}{
		{name: "defaults", want: "https://gmsa.ksa-system.svc:443/"},
		{name: "port and path", port: 8443, path: "/validate", want: "https://gmsa.ksa-system.svc:8443/validate"},
		{name: "path without slash", path: "mutate", want: "https://gmsa.ksa-system.svc:443/mutate"},
		{name: "trailing slash kept", path: "/validate/", want: "https://gmsa.ksa-system.svc:443/validate/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, admissionauth.ServiceAudience("ksa-system", "gmsa", tt.port, tt.path))
		})
	}
}

// TestHandler: the middleware refuses with the status of the error and
// never calls the handler; it passes the body intact and the Result in the
// context when the token is good.
func TestHandler(t *testing.T) {
	key := testkeys.K8sEC()
	good := webhookToken(t, minter(t, key), tokens.BoundValidatingWebhookConfiguration, "gmsa", audience, "*")
	tests := []struct {
		name     string
		headers  []string
		body     string
		mode     admissionauth.Mode
		limit    int64
		wantCode int
		wantAuth bool
	}{
		{name: "good", headers: []string{"Bearer " + good}, body: review, wantCode: 200, wantAuth: true},
		{name: "missing", body: review, wantCode: 401},
		{name: "missing, accept mode", body: "not even JSON", mode: admissionauth.Accept, wantCode: 200},
		{name: "twice", headers: []string{"Bearer " + good, "Bearer " + good}, body: review, wantCode: 401},
		{name: "not a review", headers: []string{"Bearer " + good}, body: `{"apiVersion":"v1","kind":"Pod"}`, wantCode: 400},
		{name: "too large", headers: []string{"Bearer " + good}, body: review, limit: 64, wantCode: 413},
		{name: "exactly the limit", headers: []string{"Bearer " + good}, body: review, limit: int64(len(review)), wantCode: 200, wantAuth: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := admissionauth.New(admissionauth.Config{
				Tokens: validator(t, key, now, false).ValidateFor, Audience: audience,
				Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa"}},
				ServiceAccounts: []ksa.ServiceAccount{caller}, Mode: tt.mode, MaxRequestBytes: tt.limit,
			})
			require.NoError(t, err)
			called := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				res, ok := admissionauth.FromContext(r.Context())
				require.True(t, ok)
				assert.Equal(t, tt.wantAuth, res.Authenticated)
				body, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				assert.Equal(t, tt.body, string(body))
			})
			srv := httptest.NewServer(v.Handler(next))
			defer srv.Close()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/validate", strings.NewReader(tt.body))
			require.NoError(t, err)
			for _, h := range tt.headers {
				req.Header.Add("Authorization", h)
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.wantCode, resp.StatusCode)
			assert.Equal(t, tt.wantCode == 200, called)
		})
	}
	_, ok := admissionauth.FromContext(context.Background())
	assert.False(t, ok)
}

// TestParseReview reads what it needs strictly.
func TestParseReview(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    admissionauth.Review
		wantErr bool
	}{
		{name: "v1 pod", body: review, want: admissionauth.Review{APIVersion: admissionauth.AdmissionV1, UID: "705ab4f5-6393-11e8-b7cc-42010a800002"}},
		{name: "v1beta1 group", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"resource":{"resource":"deployments","group":"apps"},"uid":"x"}}`,
			want: admissionauth.Review{APIVersion: admissionauth.AdmissionV1beta1, UID: "x", Group: "apps"}},
		{name: "response only", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x"}}`, wantErr: true},
		{name: "no uid", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"resource":{"group":""}}}`, wantErr: true},
		{name: "no resource", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x"}}`, wantErr: true},
		{name: "other kind", body: `{"apiVersion":"admission.k8s.io/v1","kind":"TokenReview","request":{"uid":"x","resource":{}}}`, wantErr: true},
		{name: "other version", body: `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{"uid":"x","resource":{}}}`, wantErr: true},
		{name: "group twice", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{"group":"windows.k8s.io","group":"apps"}}}`, wantErr: true},
		{name: "resource in another case", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{"group":"apps"},"Resource":{"group":""}}}`, wantErr: true},
		{name: "group not a string", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{"group":1}}}`, wantErr: true},
		{name: "trailing data", body: review + `{}`, wantErr: true},
		{name: "invalid UTF-8 in a skipped member", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","x":"` + "\xff" + `","request":{"uid":"x","resource":{}}}`, wantErr: true},
		{name: "too deep", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{}},"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := admissionauth.ParseReview([]byte(tt.body))
			if tt.wantErr {
				require.ErrorIs(t, err, admissionauth.ErrReview)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestStatusCode of each sentinel, and of an unknown error.
func TestStatusCode(t *testing.T) {
	assert.Equal(t, 200, admissionauth.StatusCode(nil))
	assert.Equal(t, 500, admissionauth.StatusCode(errors.New("other")))
	assert.Equal(t, 413, admissionauth.StatusCode(admissionauth.ErrTooLarge))
	assert.Equal(t, 400, admissionauth.StatusCode(admissionauth.ErrReview))
}
