package tokens

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every rejection matches one of them with errors.Is; the
// typed errors below carry what the caller acts on and match their
// sentinels.
var (
	// ErrTooLarge: the token is over the size limit; it was not parsed.
	ErrTooLarge = errors.New("token too large")
	// ErrMalformed: the token is not a compact JWS with strict base64url
	// parts and strict JSON header and claims.
	ErrMalformed = errors.New("malformed token")
	// ErrUnknownIssuer: the iss claim is not an accepted issuer. Like
	// Kubernetes' "not my token", a union of validators may move on.
	ErrUnknownIssuer = errors.New("token issuer is not accepted")
	// ErrUnknownKeyID: no verification key has the token's kid.
	ErrUnknownKeyID = errors.New("no key for the token's key ID")
	// ErrNoKeys: the token has no kid and the key source has no keys.
	ErrNoKeys = errors.New("no verification keys")
	// ErrKeySource: the key source failed (a remote key set could not be
	// fetched).
	ErrKeySource = errors.New("key source failed")
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = errors.New("invalid token signature")
	// ErrAlgorithmNotAllowed: the header's alg is none, HMAC, unknown, or
	// not allowed for the key.
	ErrAlgorithmNotAllowed = errors.New("token algorithm not allowed")
	// ErrAudienceMismatch: the token's audiences and the accepted ones do not
	// intersect.
	ErrAudienceMismatch = errors.New("token audience not accepted")
	// ErrExpired: exp is more than the leeway in the past.
	ErrExpired = errors.New("service account token has expired")
	// ErrNotYetValid: nbf is more than the leeway in the future.
	ErrNotYetValid = errors.New("service account token is not valid yet")
	// ErrIssuedInFuture: iat is more than the leeway in the future.
	ErrIssuedInFuture = errors.New("service account token is issued in the future")
	// ErrMissingClaim: a claim ksa requires is absent or empty.
	ErrMissingClaim = errors.New("required claim missing")
	// ErrInvalidated: an object the token is bound to is gone or deleted
	// (Kubernetes: "service account token has been invalidated"), or the
	// service account was deleted.
	ErrInvalidated = errors.New("service account token has been invalidated")
	// ErrBoundObjectNotFound: a bound pod, secret or node does not exist.
	ErrBoundObjectNotFound = errors.New("bound object not found")
	// ErrBoundObjectDeleted: a bound object was deleted more than the
	// leeway ago.
	ErrBoundObjectDeleted = errors.New("bound object deleted")
	// ErrBoundObjectUIDMismatch: a bound object exists with another UID
	// (deleted and recreated).
	ErrBoundObjectUIDMismatch = errors.New("bound object UID does not match the token")
	// ErrServiceAccountNotFound: the service account does not exist.
	ErrServiceAccountNotFound = errors.New("service account not found")
	// ErrServiceAccountUIDMismatch: the service account exists with another
	// UID.
	ErrServiceAccountUIDMismatch = errors.New("service account UID does not match the token")
	// ErrServiceAccountDeleted: the service account was deleted more than
	// the leeway ago.
	ErrServiceAccountDeleted = errors.New("service account deleted")
	// ErrLookupFailed: the object getter failed for a reason other than
	// "not found"; the token is refused.
	ErrLookupFailed = errors.New("bound object lookup failed")
	// ErrLegacyToken: a legacy Secret-based token failed its checks.
	ErrLegacyToken = errors.New("invalid legacy service account token")
	// ErrInvalidRequest: a mint request breaks the TokenRequest rules.
	ErrInvalidRequest = errors.New("invalid token request")
)

// SizeError reports a token over the size limit. It matches [ErrTooLarge].
type SizeError struct {
	Size, Limit int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("token of %d bytes is over the %d-byte limit", e.Size, e.Limit)
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
	msg := "malformed token " + e.Part
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
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
	return fmt.Sprintf("token issuer %q is not one of %q", e.Issuer, e.Accepted)
}

// Is reports whether target is [ErrUnknownIssuer].
func (e *IssuerError) Is(target error) bool { return target == ErrUnknownIssuer }

// KeyError reports that no key could be tried: an unknown kid, an empty key
// source, or a key source that failed. It matches [ErrUnknownKeyID],
// [ErrNoKeys] or [ErrKeySource].
type KeyError struct {
	KeyID string
	Err   error
}

func (e *KeyError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("invalid signature, key source failed: %v", e.Err)
	case e.KeyID != "":
		return fmt.Sprintf("invalid signature, no keys found for key ID %q", e.KeyID)
	default:
		return "invalid signature, no keys found"
	}
}

// Is matches the sentinel for the case.
func (e *KeyError) Is(target error) bool {
	switch {
	case e.Err != nil:
		return target == ErrKeySource
	case e.KeyID != "":
		return target == ErrUnknownKeyID
	default:
		return target == ErrNoKeys
	}
}

// Unwrap returns the key source's error, if any.
func (e *KeyError) Unwrap() error { return e.Err }

// AlgorithmError reports an alg the validator does not allow with a key. It
// matches [ErrAlgorithmNotAllowed].
type AlgorithmError struct {
	Algorithm string
	// KeyID and KeyAlgorithm describe the key tried, when one was.
	KeyID        string
	KeyAlgorithm string
	Reason       string
}

func (e *AlgorithmError) Error() string {
	msg := fmt.Sprintf("token algorithm %q is not allowed", e.Algorithm)
	if e.KeyAlgorithm != "" {
		msg += fmt.Sprintf(" for key %q (%s)", e.KeyID, e.KeyAlgorithm)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is reports whether target is [ErrAlgorithmNotAllowed].
func (e *AlgorithmError) Is(target error) bool { return target == ErrAlgorithmNotAllowed }

// SignatureError reports a signature that does not verify with a key. It
// matches [ErrBadSignature].
type SignatureError struct {
	KeyID     string
	Algorithm string
	Err       error
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("invalid token signature (key %q, %s): %v", e.KeyID, e.Algorithm, e.Err)
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
	return fmt.Sprintf("token audiences %q is invalid for the target audiences %q", e.Token, e.Accepted)
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
	return fmt.Sprintf("%v (%s %s, now %s, leeway %s)", e.sentinel(), e.Claim,
		e.Time.UTC().Format(time.RFC3339), e.Now.UTC().Format(time.RFC3339), e.Leeway)
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
	return fmt.Sprintf("claim %s %s", e.Claim, e.Reason)
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
	sa := e.Kind == KindServiceAccount
	switch e.Problem {
	case ErrServiceAccountNotFound:
		return fmt.Sprintf("service account %s/%s not found: %v", e.Namespace, e.Name, e.Err)
	case ErrServiceAccountUIDMismatch:
		return fmt.Sprintf("service account UID (%s) does not match claim (%s)", e.ActualUID, e.ClaimedUID)
	case ErrServiceAccountDeleted:
		return fmt.Sprintf("service account %s/%s has been deleted", e.Namespace, e.Name)
	case ErrBoundObjectUIDMismatch:
		what := strings.ToLower(string(e.Kind))
		claim := "service account " + what + " ref claim"
		return fmt.Sprintf("%s UID (%s) does not match %s (%s)", what, e.ActualUID, claim, e.ClaimedUID)
	case ErrLookupFailed:
		if sa {
			return fmt.Sprintf("looking up service account %s/%s: %v", e.Namespace, e.Name, e.Err)
		}
		return fmt.Sprintf("service account token has been invalidated: looking up %s %q: %v", e.Kind, e.Name, e.Err)
	case ErrBoundObjectDeleted:
		return fmt.Sprintf("service account token has been invalidated: %s %q was deleted at %s", e.Kind, e.Name, e.DeletedAt.UTC().Format(time.RFC3339))
	default: // ErrBoundObjectNotFound
		return fmt.Sprintf("service account token has been invalidated: %s %q not found", e.Kind, e.Name)
	}
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

func (e *LegacyError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Is matches ErrLegacyToken, and ErrInvalidated for invalidated tokens.
func (e *LegacyError) Is(target error) bool {
	return target == ErrLegacyToken || (e.Invalidated && target == ErrInvalidated)
}

// Unwrap returns the cause, if any.
func (e *LegacyError) Unwrap() error { return e.Err }

// RequestError reports a mint request that breaks a TokenRequest rule,
// with Kubernetes' message. It matches [ErrInvalidRequest].
type RequestError struct {
	// Field is the TokenRequest field at fault, e.g. spec.expirationSeconds.
	Field  string
	Reason string
}

func (e *RequestError) Error() string {
	if e.Field == "" {
		return "invalid token request: " + e.Reason
	}
	return fmt.Sprintf("invalid token request: %s: %s", e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidRequest].
func (e *RequestError) Is(target error) bool { return target == ErrInvalidRequest }
