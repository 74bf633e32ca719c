package credprovider

import (
	"context"
	"time"

	"github.com/ksa-go/ksa/internal/errs"

	"github.com/ksa-go/ksa/tokens"
)

// VerifyFunc verifies a token's signature, issuer, audience and times and
// says what it proves. Both ksa verifiers fit, as method values:
// (*tokens.Validator).ValidateFor, for keys the plugin holds (a key file,
// a tokens.FileSource), and (*oidc.Verifier).VerifyFor, for an issuer
// discovered over OIDC.
type VerifyFunc func(ctx context.Context, token string, audiences []string) (*tokens.Result, error)

// TokenCheck is what [CheckToken] holds a request's token to. Its zero
// value checks nothing and is refused: Verify and Audience are required.
type TokenCheck struct {
	// Verify verifies the token offline (no TokenReview); required.
	Verify VerifyFunc
	// Audience is the audience the token must name: the provider's
	// tokenAttributes.serviceAccountTokenAudience. Required.
	Audience string
	// InsecureSkipPodBinding accepts a token bound to no pod. The kubelet
	// always sends a pod-bound token; one that is not was not minted for
	// this pull.
	InsecureSkipPodBinding bool
}

// CheckToken checks req's token before any exchange: verified by
// check.Verify for check.Audience (which checks the issuer, signature and
// expiry), and bound to a pod, as every token the kubelet sends for a pull
// is. It returns what the token proves. A request without a token is
// refused with [ErrNoToken], a token that fails with [ErrTokenRefused]
// wrapping the verifier's error (tokens.ErrExpired,
// tokens.ErrAudienceMismatch, ...), and a check without Verify or Audience
// with a *ksa.ConfigError.
func CheckToken(ctx context.Context, req *Request, check TokenCheck) (*tokens.Result, error) {
	if check.Verify == nil {
		return nil, configError("TokenCheck.Verify", "is required")
	}
	if check.Audience == "" {
		return nil, configError("TokenCheck.Audience", "is required")
	}
	if req == nil || req.ServiceAccountToken == "" {
		return nil, ErrNoToken
	}
	res, err := check.Verify(ctx, req.ServiceAccountToken, []string{check.Audience})
	if err != nil {
		return nil, tokenRefused("", err)
	}
	if res == nil {
		return nil, tokenRefused("the verifier returned no result", nil)
	}
	pod := res.Identity.Pod
	if !check.InsecureSkipPodBinding && (pod.Name == "" || pod.UID == "") {
		return nil, tokenRefused("the token is bound to no pod", nil)
	}
	return res, nil
}

// tokenEnd returns the last instant a credential obtained with token may
// be cached: its exp, or its warnafter time when kube-apiserver extended
// its life (--service-account-extend-token-expiration mints tokens valid
// for a year that the kubelet replaces after their requested hour). The
// token is only read here, not verified: it shortens the cache, never
// lengthens it.
func tokenEnd(token string) (time.Time, error) {
	claims, err := tokens.ParseUnverified(token)
	if err != nil {
		return time.Time{}, invalidResponseCause("reading the request's token", err)
	}
	end := claims.Expiry
	if end.IsZero() {
		return time.Time{}, invalidResponse("the request's token has no expiry")
	}
	if k := claims.Kubernetes; k != nil && !k.WarnAfter.IsZero() && k.WarnAfter.Before(end) {
		end = k.WarnAfter
	}
	return end, nil
}

func invalidResponseCause(msg string, cause error) error {
	return wrap(ErrInvalidResponse, errs.Text(ErrInvalidResponse)+": "+msg, cause)
}
