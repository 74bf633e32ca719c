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
