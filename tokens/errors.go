package tokens

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// Sentinel errors. Every rejection matches one of them with errors.Is; the
// typed errors below carry what the caller acts on and match their
// sentinels.
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
	// ErrSign: the signer failed to sign a token.
	ErrSign = errs.New(prefix, "signing failed")
	// ErrInvalidConfig: a constructor got a configuration it cannot use.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
)

// prefix starts the messages of the package's errors.
const prefix = "tokens"

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g.
	// "ValidatorConfig.Audiences".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// SizeError reports a token over the size limit. It matches [ErrTooLarge].
type SizeError struct {
	Size, Limit int
}

func (e *SizeError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("token of %d bytes is over the %d-byte limit", e.Size, e.Limit), nil)
}

// Is reports whether target is [ErrTooLarge].
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// MalformedError reports which part of a token does not parse and why. It
// matches [ErrMalformed].
type MalformedError struct {
	// Part is "token", "header", "claims" or "signature".
	Part   string
	Reason string
	Err    error
}

func (e *MalformedError) Error() string {
	msg := "malformed token"
	if e.Part != "" && e.Part != "token" {
		msg += " " + e.Part
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is [ErrMalformed].
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// Unwrap returns the underlying cause, if any.
func (e *MalformedError) Unwrap() error { return e.Err }

// IssuerError reports an iss claim that is not accepted. It matches
// [ErrUnknownIssuer].
type IssuerError struct {
	Issuer   string
	Accepted []string
}

func (e *IssuerError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("issuer %q is not one of %q", e.Issuer, e.Accepted), nil)
}

// Is reports whether target is [ErrUnknownIssuer].
func (e *IssuerError) Is(target error) bool { return target == ErrUnknownIssuer }

// KeyError reports that no key could be tried: an unknown kid, an empty key
// source, or a key source that failed. It matches [ErrUnknownKeyID],
// jwks.ErrNoKeys or [ErrKeySource]. A kid a remote key set does not know
// and may not fetch again yet matches [ErrUnknownKeyID], and Err is the
// *jwks.RateLimitError saying when it may.
type KeyError struct {
	KeyID string
	Err   error
}

// rateLimited reports an unknown kid the key source could not look for
// again yet.
func (e *KeyError) rateLimited() bool {
	var limited *jwks.RateLimitError
	return e.KeyID != "" && errors.As(e.Err, &limited) && limited.KeyID == e.KeyID
}

func (e *KeyError) Error() string {
	switch {
	case e.rateLimited():
		return errs.Msg(prefix, "invalid signature", e.Err)
	case e.Err != nil:
		return errs.Msg(prefix, "invalid signature, key source failed", e.Err)
	case e.KeyID != "":
		return errs.Msg(prefix, fmt.Sprintf("invalid signature, no keys found for key ID %q", e.KeyID), nil)
	default:
		return errs.Msg(prefix, "invalid signature, no keys found", nil)
	}
}

// Is matches the sentinel for the case.
func (e *KeyError) Is(target error) bool {
	switch {
	case e.rateLimited():
		return target == ErrUnknownKeyID
	case e.Err != nil:
		return target == ErrKeySource
	case e.KeyID != "":
		return target == ErrUnknownKeyID
	default:
		return target == jwks.ErrNoKeys
	}
}

// Unwrap returns the key source's error, if any.
func (e *KeyError) Unwrap() error { return e.Err }

// KeyLimitError reports the keys a token's signature was not checked
// against because MaxKeysPerToken keys had been tried already. It matches
// [ErrTooManyKeys].
type KeyLimitError struct {
	Limit int
	// Skipped counts the keys left in the source's answer, duplicates
	// included.
	Skipped int
}

func (e *KeyLimitError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%d more keys not tried (at most %d per token)", e.Skipped, e.Limit), nil)
}

// Is reports whether target is [ErrTooManyKeys].
func (e *KeyLimitError) Is(target error) bool { return target == ErrTooManyKeys }

// AlgorithmError reports an alg the validator does not allow with a key. It
// matches [ErrAlgorithmNotAllowed].
type AlgorithmError struct {
	Algorithm string
	// KeyID and KeyAlgorithm describe the key tried, when one was.
	KeyID        string
	KeyAlgorithm string
	Reason       string
	Err          error
}

func (e *AlgorithmError) Error() string {
	msg := fmt.Sprintf("algorithm %q is not allowed", e.Algorithm)
	if e.KeyAlgorithm != "" {
		msg += fmt.Sprintf(" for key %q (%s)", e.KeyID, e.KeyAlgorithm)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is [ErrAlgorithmNotAllowed].
func (e *AlgorithmError) Is(target error) bool { return target == ErrAlgorithmNotAllowed }

// Unwrap returns the cause, if any.
func (e *AlgorithmError) Unwrap() error { return e.Err }

// SignatureError reports a signature that does not verify with a key. It
// matches [ErrBadSignature].
type SignatureError struct {
	KeyID     string
	Algorithm string
	Err       error
}

func (e *SignatureError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("invalid signature (key %q, %s)", e.KeyID, e.Algorithm), e.Err)
}

// Is reports whether target is [ErrBadSignature].
func (e *SignatureError) Is(target error) bool { return target == ErrBadSignature }

// Unwrap returns the cause.
func (e *SignatureError) Unwrap() error { return e.Err }

// AudienceError reports token audiences that do not meet the accepted ones.
// It matches [ErrAudienceMismatch]. The message follows Kubernetes': token
// audiences ["foo"] is invalid for the target audiences ["api"].
type AudienceError struct {
	Token    []string
	Accepted []string
}

func (e *AudienceError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("token audiences %q is invalid for the target audiences %q", e.Token, e.Accepted), nil)
}

// Is reports whether target is [ErrAudienceMismatch].
func (e *AudienceError) Is(target error) bool { return target == ErrAudienceMismatch }

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

// ClaimError reports a required claim that is absent or unusable. It
// matches [ErrMissingClaim].
type ClaimError struct {
	Claim  string
	Reason string
}

func (e *ClaimError) Error() string {
	return errs.Msg(prefix, "claim "+e.Claim+" "+e.Reason, nil)
}

// Is reports whether target is [ErrMissingClaim].
func (e *ClaimError) Is(target error) bool { return target == ErrMissingClaim }

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

// LegacyError reports a legacy Secret-based token that fails its checks,
// with Kubernetes' message. It matches [ErrLegacyToken], and
// [ErrInvalidated] when the secret is gone or marked invalid.
type LegacyError struct {
	Reason      string
	Invalidated bool
	Err         error
}

func (e *LegacyError) Error() string { return errs.Msg(prefix, e.Reason, e.Err) }

// Is matches ErrLegacyToken, and ErrInvalidated for invalidated tokens.
func (e *LegacyError) Is(target error) bool {
	return target == ErrLegacyToken || (e.Invalidated && target == ErrInvalidated)
}

// Unwrap returns the cause, if any.
func (e *LegacyError) Unwrap() error { return e.Err }

// SignError reports a signer that failed to sign a token (a KMS or HSM
// call that failed, a key that cannot sign). It matches [ErrSign] and wraps
// the signer's error.
type SignError struct {
	KeyID     string
	Algorithm string
	Err       error
}

func (e *SignError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("signing with key %q (%s)", e.KeyID, e.Algorithm), e.Err)
}

// Is reports whether target is [ErrSign].
func (e *SignError) Is(target error) bool { return target == ErrSign }

// Unwrap returns the signer's error.
func (e *SignError) Unwrap() error { return e.Err }

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
