package tokens

import (
	"errors"
	"time"

	"github.com/ksa-go/ksa/jwks"
)

// ValidationEvent describes one validation, for an observability hook
// (ValidatorConfig.OnValidate): metrics, audit logs, traces. It is a plain
// value; no metrics library is involved.
type ValidationEvent struct {
	// Err is the refusal, nil for a valid token.
	Err error
	// Reason is the package sentinel Err matches, the most specific one
	// ([ErrExpired], [ErrBadSignature], [ErrBoundObjectNotFound], ...): a
	// label with few values. Nil for a valid token.
	Reason error
	// Issuer is the token's issuer once it is known to be one the
	// validator accepts (empty before that): a value with few values.
	// KeyID and Algorithm are the header's, as far as it was read; on a
	// refusal they are whatever the token said (attacker-chosen): log them,
	// never use them as metric labels.
	Issuer, KeyID, Algorithm string
	// Legacy is set for a legacy Secret-based token; NoAudience for a token
	// without aud (Kubernetes counts those as legacy tokens).
	Legacy, NoAudience bool
	// WarnAfter is set for a token carrying warnafter (an extended
	// kube-api-access token); Stale when it is used past that time.
	WarnAfter, Stale bool
	// Cached is set when the answer came from the result cache.
	Cached bool
	// Duration is the time the validation took, by the validator's clock.
	Duration time.Duration
}

// reasons are the sentinels Reason picks from, most specific first.
var reasons = []error{
	ErrTooLarge, ErrMalformed, ErrUnknownIssuer, ErrAlgorithmNotAllowed, ErrKeySource,
	ErrUnknownKeyID, jwks.ErrNoKeys, ErrTooManyKeys, ErrBadSignature, ErrAudienceMismatch, ErrExpired, ErrNotYetValid,
	ErrIssuedInFuture, ErrMissingClaim, ErrLegacyToken, ErrServiceAccountNotFound,
	ErrServiceAccountUIDMismatch, ErrServiceAccountDeleted, ErrBoundObjectNotFound,
	ErrBoundObjectUIDMismatch, ErrBoundObjectDeleted, ErrLookupFailed, ErrInvalidated,
}

// Reason returns the most specific sentinel of this package that err
// matches (jwks.ErrNoKeys for an empty key source), or nil: one value per
// kind of refusal, for metrics labels and logs.
func Reason(err error) error {
	if err == nil {
		return nil
	}
	for _, r := range reasons {
		if errors.Is(err, r) {
			return r
		}
	}
	return nil
}

// trace collects what a validation learned, for its event.
type trace struct {
	issuer, kid, alg string
	noAud, warnAfter bool
}

// observe reports a validation to the hook, if there is one.
func (v *Validator) observe(start time.Time, tr *trace, res *Result, cached bool, err error) {
	if v.onValidate == nil {
		return
	}
	ev := ValidationEvent{Err: err, Reason: Reason(err), Issuer: tr.issuer, KeyID: tr.kid, Algorithm: tr.alg,
		NoAudience: tr.noAud, WarnAfter: tr.warnAfter, Cached: cached, Duration: v.now().Sub(start)}
	if res != nil {
		ev.Issuer, ev.KeyID, ev.Algorithm, ev.Legacy = res.Issuer, res.KeyID, res.Algorithm, res.Legacy
		ev.Stale = res.Stale != nil
		if c := res.Claims; c != nil {
			ev.NoAudience = len(c.Audience) == 0
			ev.WarnAfter = c.Kubernetes != nil && !c.Kubernetes.WarnAfter.IsZero()
		}
	}
	v.onValidate(ev)
}
