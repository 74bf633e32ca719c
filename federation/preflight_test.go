package federation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/tokens"
)

// TestAzurePreflight: assertions Entra would refuse are stopped before they
// are sent, with an error naming the mismatch.
func TestAzurePreflight(t *testing.T) {
	tests := []struct {
		name     string
		audience string
		life     time.Duration
		advance  time.Duration
		mod      func(*env) func(*federation.AzureConfig)
		wantErr  error
		wantHint string
	}{
		{name: "audience", audience: "api://Other", life: time.Hour, wantErr: federation.ErrAssertionAudience},
		{name: "issuer with a trailing slash", audience: federation.DefaultAudience, life: time.Hour,
			mod: func(e *env) func(*federation.AzureConfig) {
				return func(o *federation.AzureConfig) { o.Issuer = e.issuer.Issuer() + "/" }
			}, wantErr: federation.ErrAssertionIssuer, wantHint: "trailing slash"},
		{name: "subject", audience: federation.DefaultAudience, life: time.Hour,
			mod: func(*env) func(*federation.AzureConfig) {
				return func(o *federation.AzureConfig) { o.Subject = "system:serviceaccount:payments:other" }
			}, wantErr: federation.ErrAssertionSubject},
		{name: "about to expire", audience: federation.DefaultAudience, life: 10 * time.Minute, advance: 10*time.Minute - 5*time.Second, wantErr: federation.ErrAssertionExpired},
		{name: "expired: the file source refuses it", audience: federation.DefaultAudience, life: 10 * time.Minute, advance: 11 * time.Minute, wantErr: tokens.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.project(t, tt.audience, tt.life)
			e.clk.Advance(tt.advance)
			var mods []func(*federation.AzureConfig)
			if tt.mod != nil {
				mods = append(mods, tt.mod(e))
			}
			_, err := getToken(t, e.credential(t, mods...))
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantHint != "" {
				assert.Contains(t, err.Error(), tt.wantHint)
			}
			assert.Empty(t, e.entra.Exchanges(), "nothing was sent to Entra")
		})
	}
}

// TestCustomSourceIsNeverTrusted: whatever a custom token source gives, the
// pre-flight reads audience, issuer and expiry from the token that would be
// sent; what cannot be read is a typed error, never a panic, and nothing
// reaches Entra ID.
func TestCustomSourceIsNeverTrusted(t *testing.T) {
	e := newEnv(t)
	good := mint(t, e.issuer, tokens.Request{ServiceAccount: podSA, Audiences: []string{federation.DefaultAudience},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-0", UID: "pod-uid"}})
	wrongAudience := mint(t, e.issuer, tokens.Request{ServiceAccount: podSA, Audiences: []string{"https://kubernetes.default.svc"},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-0", UID: "pod-uid"}})
	parts := strings.Split(good, ".")
	for _, tc := range []struct {
		name    string
		raw     string
		srcErr  error
		wantErr []error
	}{
		{name: "genuine token", raw: good},
		{name: "the token's own audience decides", raw: wrongAudience, wantErr: []error{federation.ErrAssertionAudience}},
		{name: "empty", raw: "", wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrMalformed}},
		{name: "not a JWT", raw: "not-a-jwt", wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrMalformed}},
		{name: "no signature", raw: parts[0] + "." + parts[1] + ".", wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrMalformed}},
		{name: "padded claims", raw: parts[0] + "." + parts[1] + "=." + parts[2], wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrMalformed}},
		{name: "claims not JSON", raw: parts[0] + ".bm90IGpzb24." + parts[2], wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrMalformed}},
		{name: "oversized", raw: parts[0] + "." + strings.Repeat("A", tokens.DefaultMaxTokenBytes) + "." + parts[2], wantErr: []error{federation.ErrAssertionMalformed, tokens.ErrTooLarge}},
		{name: "source fails", srcErr: errors.New("vault unreachable")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.entra.Exchanges())
			cred := e.credential(t, func(c *federation.AzureConfig) {
				c.TokenFile = ""
				c.Source = federation.TokenSourceFunc(func(context.Context) (string, error) { return tc.raw, tc.srcErr })
			})
			tok, err := cred.GetToken(t.Context(), tokenRequest())
			switch {
			case tc.srcErr != nil:
				require.ErrorIs(t, err, tc.srcErr)
			case tc.wantErr == nil:
				require.NoError(t, err)
				assert.NotEmpty(t, tok.Token)
				return
			default:
				for _, want := range tc.wantErr {
					require.ErrorIs(t, err, want)
				}
				var pf *federation.PreflightError
				require.ErrorAs(t, err, &pf)
			}
			assert.Equal(t, before, len(e.entra.Exchanges()), "nothing sent to Entra ID")
		})
	}
}

// TestExpiryReadFromTheToken: an expired token from a custom source is
// refused by its own exp claim.
func TestExpiryReadFromTheToken(t *testing.T) {
	e := newEnv(t)
	raw := mint(t, e.issuer, tokens.Request{ServiceAccount: podSA, Audiences: []string{federation.DefaultAudience}})
	e.clk.Advance(2 * time.Hour)
	cred := e.credential(t, func(c *federation.AzureConfig) {
		c.TokenFile = ""
		c.Source = federation.TokenSourceFunc(func(context.Context) (string, error) { return raw, nil })
	})
	_, err := cred.GetToken(t.Context(), tokenRequest())
	require.ErrorIs(t, err, federation.ErrAssertionExpired)
}
