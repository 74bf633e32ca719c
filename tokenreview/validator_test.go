package tokenreview_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
)

func TestValidate(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name  string
		mode  tokenreview.Mode
		token string
		edit  func(*tokenreview.Status)
		err   error
		// reviews is how many reviews reach the apiserver.
		reviews int
		errText string
	}{
		{name: "local then review: live", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1},
		{name: "review only: live", mode: tokenreview.ReviewOnly, token: fx.token, reviews: 1},
		{
			name: "local then review: pod deleted", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) {
				*st = tokenreview.Status{Error: "[invalid bearer token, service account token has been invalidated]"}
			},
			err:     tokenreview.ErrNotAuthenticated,
			errText: `tokenreview: token not authenticated by the apiserver ("[invalid bearer token, service account token has been invalidated]")`,
		},
		{
			name: "review only: refused", mode: tokenreview.ReviewOnly, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) { *st = tokenreview.Status{} },
			err:  tokenreview.ErrNotAuthenticated, errText: "tokenreview: token not authenticated by the apiserver",
		},
		{
			name: "forged token never reaches the apiserver", mode: tokenreview.LocalThenReview,
			token: fx.token[:len(fx.token)-4] + "AAAA", reviews: 0, err: tokens.ErrBadSignature,
		},
		{
			name: "garbage never reaches the apiserver", mode: tokenreview.LocalThenReview,
			token: "not.a.token", reviews: 0, err: tokens.ErrMalformed,
		},
		{
			name: "review only: oversized token is not sent", mode: tokenreview.ReviewOnly,
			token: strings.Repeat("a", tokens.DefaultMaxTokenBytes+1), reviews: 0, err: tokens.ErrTooLarge,
		},
		{
			name: "another pod UID", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) {
				st.User.Extra = map[string][]string{ksa.ExtraPodName: {"billing-7d4"}, ksa.ExtraPodUID: {"recreated"}}
			},
			err:     tokenreview.ErrMismatch,
			errText: `tokenreview: review does not match the token: pod UID is "recreated" in the review, want "pod-uid"`,
		},
		{
			name: "another service account", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) { st.User.Username = "system:serviceaccount:prod:other" },
			err:  tokenreview.ErrMismatch,
		},
		{
			name: "another service-account UID", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) { st.User.UID = "x" },
			err:  tokenreview.ErrMismatch,
		},
		{
			name: "review only: not a service account", mode: tokenreview.ReviewOnly, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) { st.User = ksa.UserInfo{Username: "admin"} },
			err:  ksa.ErrInvalidUsername,
		},
		{
			name: "audience not asked for", mode: tokenreview.ReviewOnly, token: fx.token, reviews: 1,
			edit:    func(st *tokenreview.Status) { st.Audiences = []string{"https://kubernetes.default.svc"} },
			err:     tokenreview.ErrMismatch,
			errText: `tokenreview: review does not match the token: audiences is "[https://kubernetes.default.svc]" in the review, want [vault]`,
		},
		{
			name: "no audiences in the answer", mode: tokenreview.LocalThenReview, token: fx.token, reviews: 1,
			edit: func(st *tokenreview.Status) { st.Audiences = nil },
			err:  tokenreview.ErrMismatch,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &apiserver{user: fx.user, edit: tt.edit}
			cfg := tokenreview.ValidatorConfig{Mode: tt.mode, Reviewer: api, Audiences: []string{"vault"}}
			if tt.mode == tokenreview.LocalThenReview {
				cfg.Local = fx.local.ValidateFor
			}
			v, err := tokenreview.NewValidator(cfg)
			require.NoError(t, err)
			res, err := v.Validate(t.Context(), tt.token)
			assert.Equal(t, tt.reviews, api.calls, "reviews sent")
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				assert.Nil(t, res)
				if tt.errText != "" {
					assert.Equal(t, tt.errText, err.Error())
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, sa, res.Identity.ServiceAccount)
			assert.Equal(t, ksa.ObjectRef{Name: "billing-7d4", UID: "pod-uid"}, res.Identity.Pod)
			assert.Equal(t, []string{"vault"}, res.Audiences)
			assert.Equal(t, tokenreview.Request{Token: tt.token, Audiences: []string{"vault"}}, api.last)
		})
	}
}

func TestValidateForSendsTheAudiences(t *testing.T) {
	fx := newFixture(t)
	api := &apiserver{user: fx.user, edit: func(st *tokenreview.Status) { st.Audiences = []string{"other"} }}
	v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Local: fx.local.ValidateFor, Reviewer: api, Audiences: []string{"vault"}})
	require.NoError(t, err)
	res, err := v.ValidateFor(t.Context(), fx.token, []string{"other"})
	require.NoError(t, err)
	assert.Equal(t, []string{"other"}, api.last.Audiences)
	assert.Equal(t, []string{"other"}, res.Audiences)
}

func TestReviewFailureFailsClosed(t *testing.T) {
	fx := newFixture(t)
	cause := errors.New("connection refused")
	for _, mode := range []tokenreview.Mode{tokenreview.LocalThenReview, tokenreview.ReviewOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := tokenreview.ValidatorConfig{Mode: mode, Reviewer: &apiserver{err: cause}, Audiences: []string{"vault"}}
			if mode == tokenreview.LocalThenReview {
				cfg.Local = fx.local.ValidateFor
			}
			v, err := tokenreview.NewValidator(cfg)
			require.NoError(t, err)
			_, err = v.Validate(t.Context(), fx.token)
			require.ErrorIs(t, err, tokenreview.ErrReviewFailed)
			require.ErrorIs(t, err, cause)
			assert.Equal(t, "tokenreview: token review failed: connection refused", err.Error())

			nilStatus := tokenreview.ReviewerFunc(func(context.Context, tokenreview.Request) (*tokenreview.Status, error) { return nil, nil })
			cfg.Reviewer = nilStatus
			v, err = tokenreview.NewValidator(cfg)
			require.NoError(t, err)
			_, err = v.Validate(t.Context(), fx.token)
			require.ErrorIs(t, err, tokenreview.ErrReviewFailed)
		})
	}
}

func TestRefusalReasonIsBounded(t *testing.T) {
	long := strings.Repeat("é", tokenreview.MaxErrorText)
	api := tokenreview.ReviewerFunc(func(context.Context, tokenreview.Request) (*tokenreview.Status, error) {
		return &tokenreview.Status{Error: long}, nil
	})
	v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Reviewer: api, Audiences: []string{"vault"}})
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), "tok")
	require.ErrorIs(t, err, tokenreview.ErrNotAuthenticated)
	quoted, ok := strings.CutPrefix(err.Error(), "tokenreview: token not authenticated by the apiserver (")
	require.True(t, ok, err.Error())
	reason, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(reason), tokenreview.MaxErrorText+len("…"))
	assert.True(t, strings.HasSuffix(reason, "é…"), "cut on a rune boundary")
}

func TestNewRefuses(t *testing.T) {
	local := func(context.Context, string, []string) (*tokens.Result, error) { return nil, nil }
	api := &apiserver{}
	tests := []struct {
		name string
		cfg  tokenreview.ValidatorConfig
		msg  string
	}{
		{name: "no local", cfg: tokenreview.ValidatorConfig{Reviewer: api, Audiences: []string{"a"}},
			msg: "tokenreview: ValidatorConfig.Local is required in LocalThenReview mode"},
		{name: "local in review-only", cfg: tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Local: local, Reviewer: api, Audiences: []string{"a"}},
			msg: "tokenreview: ValidatorConfig.Local is set in ReviewOnly mode, which never validates locally"},
		{name: "no reviewer", cfg: tokenreview.ValidatorConfig{Local: local, Audiences: []string{"a"}},
			msg: "tokenreview: ValidatorConfig.Reviewer is required"},
		{name: "no audiences", cfg: tokenreview.ValidatorConfig{Local: local, Reviewer: api},
			msg: "tokenreview: ValidatorConfig.Audiences is required: a review without audiences accepts tokens meant for the apiserver"},
		{name: "empty audience", cfg: tokenreview.ValidatorConfig{Local: local, Reviewer: api, Audiences: []string{""}},
			msg: "tokenreview: ValidatorConfig.Audiences holds an empty string, which no token can name"},
		{name: "unknown mode", cfg: tokenreview.ValidatorConfig{Mode: 7, Local: local, Reviewer: api, Audiences: []string{"a"}},
			msg: "tokenreview: ValidatorConfig.Mode is Mode(7), not LocalThenReview or ReviewOnly"},
		{name: "negative size", cfg: tokenreview.ValidatorConfig{Local: local, Reviewer: api, Audiences: []string{"a"}, MaxTokenBytes: -1},
			msg: "tokenreview: ValidatorConfig.MaxTokenBytes is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tokenreview.NewValidator(tt.cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, tt.msg, err.Error())
		})
	}
}

// The default size limit is tokens.DefaultMaxTokenBytes: a token of that
// size is sent, one byte more is not.
func TestDefaultMaxTokenBytes(t *testing.T) {
	api := &apiserver{user: ksa.Identity{ServiceAccount: sa}.UserInfo()}
	v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Reviewer: api, Audiences: []string{"vault"}})
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), strings.Repeat("a", tokens.DefaultMaxTokenBytes))
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), strings.Repeat("a", tokens.DefaultMaxTokenBytes+1))
	require.ErrorIs(t, err, tokens.ErrTooLarge)
	assert.Equal(t, 1, api.calls)
}

// FuzzReviewOnly feeds arbitrary answers to a ReviewOnly validator: it never
// panics, and it accepts only a service-account user with audiences among
// those asked.
func FuzzReviewOnly(f *testing.F) {
	f.Add(true, "system:serviceaccount:prod:billing", "uid", "billing-7d4", "pod-uid", "vault")
	f.Add(true, "system:serviceaccount:prod:", "", "", "", "vault")
	f.Add(true, "admin", "", "", "", "vault")
	f.Add(true, "system:serviceaccount:a:b:c", "u", "p", "", "other")
	f.Add(false, "system:serviceaccount:prod:billing", "uid", "", "", "")
	f.Fuzz(func(t *testing.T, authenticated bool, username, uid, pod, podUID, aud string) {
		api := tokenreview.ReviewerFunc(func(context.Context, tokenreview.Request) (*tokenreview.Status, error) {
			return &tokenreview.Status{Authenticated: authenticated, Audiences: []string{aud}, User: ksa.UserInfo{
				Username: username, UID: uid,
				Extra: map[string][]string{ksa.ExtraPodName: {pod}, ksa.ExtraPodUID: {podUID}},
			}}, nil
		})
		v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Reviewer: api, Audiences: []string{"vault"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.Validate(t.Context(), "token")
		if err != nil {
			return
		}
		if !authenticated || aud != "vault" || res.Identity.ServiceAccount.Username() != username {
			t.Fatalf("accepted %v %q %q", authenticated, username, aud)
		}
	})
}
