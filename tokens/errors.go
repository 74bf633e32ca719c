package tokens

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// Sentinel errors. Every rejection matches one of them with errors.Is (a
// constructor's refusal is a *ksa.ConfigError); the typed errors
// ([TimeError], [ObjectError], [RequestError]) carry what a caller acts on
// and match their sentinels, and every message says what was wrong (the
// part of a malformed token, the key tried, the audiences and issuers).
var (
	// ErrTooLarge: the token is over the size limit; it was not parsed.
	ErrTooLarge = errs.New(prefix, "token too large")
	// ErrMalformed: the token is not a compact JWS with strict base64url
	// parts and strict JSON header and claims.
	ErrMalformed = errs.New(prefix, "malformed token")
	// ErrUnknownIssuer: the iss claim is not an accepted issuer. Like
	// Kubernetes' "not my token", a union of validators may move on.
	ErrUnknownIssuer = errs.New(prefix, "token issuer is not accepted")
	// ErrUnknownKeyID: no verification key has the token's kid.
	ErrUnknownKeyID = errs.New(prefix, "no key for the token's key ID")
	// ErrKeySource: the key source failed (a remote key set could not be
	// fetched).
	ErrKeySource = errs.New(prefix, "key source failed")
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = errs.New(prefix, "invalid token signature")
	// ErrAlgorithmNotAllowed: the header's alg is none, HMAC, unknown, or
	// not allowed for the key.
	ErrAlgorithmNotAllowed = errs.New(prefix, "token algorithm not allowed")
	// ErrAudienceMismatch: the token's audiences and the accepted ones do not
	// intersect.
	ErrAudienceMismatch = errs.New(prefix, "token audience not accepted")
	// ErrExpired: exp is more than the leeway in the past.
	ErrExpired = errs.New(prefix, "service account token has expired")
	// ErrNotYetValid: nbf is more than the leeway in the future.
	ErrNotYetValid = errs.New(prefix, "service account token is not valid yet")
	// ErrIssuedInFuture: iat is more than the leeway in the future.
	ErrIssuedInFuture = errs.New(prefix, "service account token is issued in the future")
	// ErrMissingClaim: a claim ksa requires is absent or empty.
	ErrMissingClaim = errs.New(prefix, "required claim missing")
	// ErrInvalidClaim: claims that parse but are not what Kubernetes mints
	// (a token bound to two webhook configurations, an attestation on a
	// token bound to none, an attested API group that is not one).
	ErrInvalidClaim = errs.New(prefix, "claims not as Kubernetes mints them")
	// ErrInvalidated: an object the token is bound to is gone or deleted
	// (Kubernetes: "service account token has been invalidated"), or the
	// service account was deleted.
	ErrInvalidated = errs.New(prefix, "service account token has been invalidated")
	// ErrBoundObjectNotFound: a bound pod, secret or node does not exist.
	ErrBoundObjectNotFound = errs.New(prefix, "bound object not found")
	// ErrBoundObjectDeleted: a bound object was deleted more than the
	// leeway ago.
	ErrBoundObjectDeleted = errs.New(prefix, "bound object deleted")
	// ErrBoundObjectUIDMismatch: a bound object exists with another UID
	// (deleted and recreated).
	ErrBoundObjectUIDMismatch = errs.New(prefix, "bound object UID does not match the token")
	// ErrServiceAccountNotFound: the service account does not exist.
	ErrServiceAccountNotFound = errs.New(prefix, "service account not found")
	// ErrServiceAccountUIDMismatch: the service account exists with another
	// UID.
	ErrServiceAccountUIDMismatch = errs.New(prefix, "service account UID does not match the token")
	// ErrServiceAccountDeleted: the service account was deleted more than
	// the leeway ago.
	ErrServiceAccountDeleted = errs.New(prefix, "service account deleted")
	// ErrLookupFailed: the object getter failed for a reason other than
	// "not found"; the token is refused.
	ErrLookupFailed = errs.New(prefix, "bound object lookup failed")
	// ErrLegacyToken: a legacy Secret-based token failed its checks.
	ErrLegacyToken = errs.New(prefix, "invalid legacy service account token")
	// ErrInvalidRequest: a mint request breaks the TokenRequest rules.
	ErrInvalidRequest = errs.New(prefix, "invalid token request")
	// ErrTooManyKeys: more keys share the token's kid (or, for a token
	// without kid, the key set holds more keys) than
	// ValidatorConfig.MaxKeysPerToken lets one token be checked against, and
	// none of those tried verified it.
	ErrTooManyKeys = errs.New(prefix, "too many candidate keys")
	// ErrSign: the signer failed to sign a token (a KMS or HSM call that
	// failed, a key that cannot sign); the error wraps the signer's.
	ErrSign = errs.New(prefix, "signing failed")
)

// prefix starts the messages of the package's errors.
const prefix = "tokens"

// tooLarge refuses a token over the size limit.
func tooLarge(size, limit int) error {
	return errs.Wrap(prefix, ErrTooLarge, fmt.Sprintf("token of %d bytes is over the %d-byte limit", size, limit), nil)
}

// malformed reports which part of a token ("token", "header", "claims" or
// "signature") does not parse, and why.
func malformed(part, reason string, cause error) error {
	msg := "malformed token"
	if part != "" && part != "token" {
		msg += " " + part
	}
	if reason != "" {
		msg += ": " + reason
	}
	return errs.Wrap(prefix, ErrMalformed, msg, cause)
}

// keyError reports that no key could be tried: an empty key source
// (jwks.ErrNoKeys), an unknown kid ([ErrUnknownKeyID]), or a key source
// that failed ([ErrKeySource], wrapping its error). A kid a remote key set
// does not know and may not fetch again yet is an unknown kid, wrapping the
// *jwks.RateLimitError that says when it may.
func keyError(kid string, err error) error {
	var limited *jwks.RateLimitError
	switch {
	case kid != "" && errors.As(err, &limited) && limited.KeyID == kid:
		return errs.Wrap(prefix, ErrUnknownKeyID, "invalid signature", err)
	case err != nil:
		return errs.Wrap(prefix, ErrKeySource, "invalid signature, key source failed", err)
	case kid != "":
		return errs.Wrap(prefix, ErrUnknownKeyID, fmt.Sprintf("invalid signature, no keys found for key ID %q", kid), nil)
	}
	return errs.Wrap(prefix, jwks.ErrNoKeys, "invalid signature, no keys found", nil)
}

// keyLimit reports the keys of a source's answer (duplicates included) a
// token's signature was not checked against, limit keys having been tried.
func keyLimit(skipped, limit int) error {
	return errs.Wrap(prefix, ErrTooManyKeys, fmt.Sprintf("%d more keys not tried (at most %d per token)", skipped, limit), nil)
}

// algorithmError refuses alg, with the key tried (k nil: none was).
func algorithmError(alg string, k *jwks.Key, reason string, cause error) error {
	msg := fmt.Sprintf("algorithm %q is not allowed", alg)
	if k != nil {
		msg += fmt.Sprintf(" for key %q (%s)", k.KeyID, k.Algorithm)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return errs.Wrap(prefix, ErrAlgorithmNotAllowed, msg, cause)
}

// signatureError reports a signature that does not verify with a key, or a
// key it was not checked with (outside jwks' bounds).
func signatureError(kid, alg string, cause error) error {
	return errs.Wrap(prefix, ErrBadSignature, fmt.Sprintf("invalid signature (key %q, %s)", kid, alg), cause)
}

// audienceError reports token audiences that do not meet the accepted
// ones, in Kubernetes' words: token audiences ["foo"] is invalid for the
// target audiences ["api"].
func audienceError(token, accepted []string) error {
	return errs.Wrap(prefix, ErrAudienceMismatch, fmt.Sprintf("token audiences %q is invalid for the target audiences %q", token, accepted), nil)
}

// issuerError reports an iss claim that is not accepted.
func issuerError(issuer string, accepted []string) error {
	return errs.Wrap(prefix, ErrUnknownIssuer, fmt.Sprintf("issuer %q is not one of %q", issuer, accepted), nil)
}

// claimError reports a required claim that is absent or unusable.
func claimError(claim, reason string) error {
	return errs.Wrap(prefix, ErrMissingClaim, "claim "+claim+" "+reason, nil)
}

// invalidClaim reports claims Kubernetes never mints.
func invalidClaim(claim, reason string) error {
	return errs.Wrap(prefix, ErrInvalidClaim, "claim "+claim+" "+reason, nil)
}

// signError reports a signer that failed to sign a token.
func signError(kid, alg string, cause error) error {
	return errs.Wrap(prefix, ErrSign, fmt.Sprintf("signing with key %q (%s)", kid, alg), cause)
}

// legacyError reports a legacy Secret-based token that fails its checks,
// with Kubernetes' message; it matches [ErrLegacyToken], and
// [ErrInvalidated] too when the token is invalidated (its secret gone or
// marked invalid).
func legacyError(reason string, invalidated bool, cause error) error {
	kind := ErrLegacyToken
	if invalidated {
		kind = errLegacyInvalidated
	}
	return errs.Wrap(prefix, kind, reason, cause)
}

// errLegacyInvalidated matches both sentinels of an invalidated legacy
// token; legacyError always gives a message of its own, so its text is
// never printed.
var errLegacyInvalidated = errs.Join(prefix, "", []error{ErrLegacyToken, ErrInvalidated})

// configError refuses a field of a config struct of the package.
func configError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason, Err: cause}
}

// TimeError reports a time claim outside its window. It matches
// [ErrExpired] (exp), [ErrNotYetValid] (nbf) or [ErrIssuedInFuture] (iat).
type TimeError struct {
	// Claim is "exp", "nbf" or "iat".
	Claim  string
	Time   time.Time
	Now    time.Time
	Leeway time.Duration
}

func (e *TimeError) sentinel() error {
	switch e.Claim {
	case claimExp:
		return ErrExpired
	case claimNbf:
		return ErrNotYetValid
	default:
		return ErrIssuedInFuture
	}
}

func (e *TimeError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%s (%s %s, now %s, leeway %s)", errs.Text(e.sentinel()), e.Claim,
		e.Time.UTC().Format(time.RFC3339), e.Now.UTC().Format(time.RFC3339), e.Leeway), nil)
}

// Is reports whether target is the sentinel of the claim.
func (e *TimeError) Is(target error) bool { return target == e.sentinel() }

// ObjectError reports a failed liveness check of the service account or a
// bound object. Its message is Kubernetes' for the case; it matches the
// specific sentinel (ErrServiceAccountNotFound, ErrBoundObjectUIDMismatch,
// ...) and, for a missing or deleted bound object or a deleted service
// account, also [ErrInvalidated].
type ObjectError struct {
	Kind      ObjectKind
	Namespace string
	Name      string
	// ClaimedUID is the UID in the token; ActualUID the live object's.
	ClaimedUID string
	ActualUID  string
	// DeletedAt is the deletion timestamp of a deleted object.
	DeletedAt time.Time
	// Problem is the specific sentinel.
	Problem error
	// Err is the getter's error, for not-found and lookup failures.
	Err error
}

func (e *ObjectError) Error() string {
	invalidated := errs.Text(ErrInvalidated) + ": "
	cause := e.Err
	var msg string
	switch e.Problem {
	case ErrServiceAccountNotFound:
		msg = fmt.Sprintf("service account %s/%s not found", e.Namespace, e.Name)
		cause = nil // the getter's "not found" would only repeat it
	case ErrServiceAccountUIDMismatch:
		msg = fmt.Sprintf("service account UID (%s) does not match claim (%s)", e.ActualUID, e.ClaimedUID)
	case ErrServiceAccountDeleted:
		msg = fmt.Sprintf("service account %s/%s has been deleted", e.Namespace, e.Name)
	case ErrBoundObjectUIDMismatch:
		what := strings.ToLower(string(e.Kind))
		msg = fmt.Sprintf("%s UID (%s) does not match service account %s ref claim (%s)", what, e.ActualUID, what, e.ClaimedUID)
	case ErrLookupFailed:
		if e.Kind == KindServiceAccount {
			msg = fmt.Sprintf("looking up service account %s/%s", e.Namespace, e.Name)
		} else {
			msg = invalidated + fmt.Sprintf("looking up %s %q", e.Kind, e.Name)
		}
	case ErrBoundObjectDeleted:
		msg = invalidated + fmt.Sprintf("%s %q was deleted at %s", e.Kind, e.Name, e.DeletedAt.UTC().Format(time.RFC3339))
	default: // ErrBoundObjectNotFound
		msg = invalidated + fmt.Sprintf("%s %q not found", e.Kind, e.Name)
		cause = nil
	}
	return errs.Msg(prefix, msg, cause)
}

// Is matches the specific sentinel, and ErrInvalidated for objects that are
// gone.
func (e *ObjectError) Is(target error) bool {
	if target == e.Problem {
		return true
	}
	if target == ErrInvalidated {
		switch e.Problem {
		case ErrBoundObjectNotFound, ErrBoundObjectDeleted, ErrServiceAccountDeleted:
			return true
		}
	}
	return false
}

// Unwrap returns the getter's error, if any.
func (e *ObjectError) Unwrap() error { return e.Err }

// RequestError reports a mint request that breaks a TokenRequest rule,
// with Kubernetes' message. It matches [ErrInvalidRequest].
type RequestError struct {
	// Field is the TokenRequest field at fault, e.g. spec.expirationSeconds.
	Field  string
	Reason string
	Err    error
}

func (e *RequestError) Error() string {
	msg := errs.Text(ErrInvalidRequest)
	if e.Field != "" {
		msg += ": " + e.Field
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is [ErrInvalidRequest].
func (e *RequestError) Is(target error) bool { return target == ErrInvalidRequest }

// Unwrap returns the cause, if any.
func (e *RequestError) Unwrap() error { return e.Err }
