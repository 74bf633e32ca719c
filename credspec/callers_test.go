package credspec_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// TestHandlerCallers: with a caller verifier per path, a review reaches the
// webhook only with a token bound to that path's configuration and URL;
// others are refused with admissionauth's status and no review, and the
// refusal is what OnReview sees. Without verifiers nothing changes.
func TestHandlerCallers(t *testing.T) {
	const issuer = "https://kubernetes.default.svc.cluster.local"
	now := time.Unix(1514764800, 0)
	key := testkeys.K8sEC()
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: keys,
		InsecureSkipAudienceCheck: true, SkipObjectCheck: true, Now: func() time.Time { return now }})
	require.NoError(t, err)
	caller := ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"}
	url := func(path string) string {
		return admissionauth.ServiceAudience("ksa-system", "gmsa-webhook", 443, path)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	token := func(kind tokens.BoundKind, path string) string {
		tok, err := minter.Mint(t.Context(), tokens.Request{ServiceAccount: caller, Audiences: []string{url(path)},
			BoundObject:  &tokens.BoundObject{Kind: kind, Name: "gmsa-webhook", UID: "config-uid"},
			Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {tokens.AllAPIGroups}}})
		require.NoError(t, err)
		return "Bearer " + tok.Raw
	}
	mutating, validating := tokens.BoundMutatingWebhookConfiguration, tokens.BoundValidatingWebhookConfiguration
	tests := []struct {
		name     string
		path     string
		auth     string
		verify   bool
		wantCode int
	}{
		{name: "mutate with its token", path: "/mutate", auth: token(mutating, "/mutate"), verify: true, wantCode: 200},
		{name: "validate with its token", path: "/validate", auth: token(validating, "/validate"), verify: true, wantCode: 200},
		{name: "no token", path: "/validate", verify: true, wantCode: 401},
		{name: "the mutating token at /validate", path: "/validate", auth: token(mutating, "/mutate"), verify: true, wantCode: 401},
		{name: "validate's URL but the mutating binding", path: "/validate", auth: token(mutating, "/validate"), verify: true, wantCode: 403},
		{name: "no verifier, no token", path: "/validate", wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{}
			cfg := credspec.HandlerConfig{
				Expander:  newExpander(t, credspec.ExpanderConfig{Source: src}),
				Validator: newValidator(t, src, &fakeAuthorizer{}),
			}
			var outcomes []credspec.ReviewOutcome
			cfg.OnReview = func(o credspec.ReviewOutcome) { outcomes = append(outcomes, o) }
			if tt.verify {
				cfg.MutateCallers, cfg.ValidateCallers, err = credspec.CallersConfig{Tokens: validator.ValidateFor,
					URL: "https://gmsa-webhook.ksa-system.svc:443", Configuration: "gmsa-webhook",
					ServiceAccounts: []ksa.ServiceAccount{caller}}.Verifiers()
				require.NoError(t, err)
			}
			h := newTestHandler(t, cfg)
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, tt.path, bytes.NewReader(reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil)))
			req.Header.Set("Content-Type", "application/json")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			require.Len(t, outcomes, 1)
			if tt.wantCode == 200 {
				assert.True(t, decodeReview(t, rec.Body.Bytes()).Response.Allowed)
				return
			}
			assert.False(t, outcomes[0].Allowed)
			assert.Equal(t, tt.wantCode, admissionauth.StatusCode(outcomes[0].Err))
			assert.NotContains(t, rec.Body.String(), "AdmissionReview")
		})
	}
}

// TestCallersConfig refuses a URL with a path and what admissionauth
// refuses.
func TestCallersConfig(t *testing.T) {
	check := func(context.Context, string, []string) (*tokens.Result, error) { return nil, nil }
	sas := []ksa.ServiceAccount{{Namespace: "kube-system", Name: "webhook-auth"}}
	tests := []struct {
		name string
		cfg  credspec.CallersConfig
	}{
		{name: "path", cfg: credspec.CallersConfig{Tokens: check, URL: "https://h:443/validate", Configuration: "c", ServiceAccounts: sas}},
		{name: "trailing slash", cfg: credspec.CallersConfig{Tokens: check, URL: "https://h:443/", Configuration: "c", ServiceAccounts: sas}},
		{name: "http", cfg: credspec.CallersConfig{Tokens: check, URL: "http://h:443", Configuration: "c", ServiceAccounts: sas}},
		{name: "no configuration", cfg: credspec.CallersConfig{Tokens: check, URL: "https://h:443", ServiceAccounts: sas}},
		{name: "no service account", cfg: credspec.CallersConfig{Tokens: check, URL: "https://h:443", Configuration: "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.cfg.Verifiers()
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
	m, v, err := credspec.CallersConfig{Tokens: check, URL: "https://h:443", Configuration: "c", ServiceAccounts: sas}.Verifiers()
	require.NoError(t, err)
	assert.Equal(t, "https://h:443/mutate", m.Audience())
	assert.Equal(t, "https://h:443/validate", v.Audience())
	assert.Equal(t, admissionauth.Require, v.Mode())
}
