package federation

import (
	"github.com/ksa-go/ksa/internal/errs"

	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ksa-go/ksa/tokens"
)

// errNoClaims reports a pre-flight without claims to check.
var errNoClaims = errs.New(prefix, "no claims to check")

// readAssertion decodes, without verifying, the claims of the assertion
// about to be sent: the pre-flight checks what leaves, whatever a token
// source says of it.
func readAssertion(raw string) (*tokens.Claims, error) {
	claims, err := tokens.ParseUnverified(raw)
	if err != nil {
		return nil, &PreflightError{Check: "format", Sentinel: ErrAssertionMalformed, Err: err}
	}
	return claims, nil
}

// preflight checks what Entra ID will check, before the assertion is sent.
func (c *AzureCredential) preflight(claims *tokens.Claims) error {
	if claims == nil {
		return &PreflightError{Check: "format", Sentinel: ErrAssertionMalformed, Err: errNoClaims}
	}
	if !slices.Contains(claims.Audience, c.audience) {
		hint := "the projected token's serviceAccountToken.audience must be " + c.audience
		return &PreflightError{Check: "audience", Want: c.audience, Got: strings.Join(claims.Audience, ","), Hint: hint, Sentinel: ErrAssertionAudience}
	}
	if err := c.checkExpiry(claims); err != nil {
		return err
	}
	if c.issuer != "" && claims.Issuer != c.issuer {
		return &PreflightError{Check: "issuer", Want: c.issuer, Got: claims.Issuer, Hint: issuerHint(c.issuer, claims.Issuer), Sentinel: ErrAssertionIssuer}
	}
	if c.subject != "" && claims.Subject != c.subject {
		return &PreflightError{Check: "subject", Want: c.subject, Got: claims.Subject, Sentinel: ErrAssertionSubject}
	}
	return nil
}

// checkExpiry refuses an assertion with less than the minimum time left (or
// none that can be read).
func (c *AzureCredential) checkExpiry(claims *tokens.Claims) error {
	if claims == nil || claims.Expiry.IsZero() {
		return &PreflightError{Check: "expiry", Want: "an exp claim", Got: "none", Sentinel: ErrAssertionExpired}
	}
	if left := claims.Expiry.Sub(c.now()); left < c.minLeft {
		return &PreflightError{Check: "expiry", Want: fmt.Sprintf("at least %s left", c.minLeft), Got: claims.Expiry.UTC().Format(time.RFC3339),
			Hint: "the kubelet has not rotated the projected token, or retries took too long", Sentinel: ErrAssertionExpired}
	}
	return nil
}

// issuerHint names the usual culprits of an issuer mismatch.
func issuerHint(want, got string) string {
	switch {
	case strings.TrimSuffix(want, "/") == strings.TrimSuffix(got, "/"):
		return "the two differ only by a trailing slash: Entra ID compares issuers exactly"
	case strings.TrimSpace(got) != got || strings.TrimSpace(want) != want:
		return "leading or trailing whitespace"
	}
	return "the federated identity credential's issuer must equal the cluster's --service-account-issuer"
}

// describe names the assertion behind an Entra error, for the fix text.
func (c *AzureCredential) describe(ctx context.Context, claims *tokens.Claims) *tokens.Claims {
	if claims != nil {
		return claims
	}
	if raw, err := c.src.Token(ctx); err == nil {
		if claims, err := readAssertion(raw); err == nil {
			return claims
		}
	}
	return nil
}
