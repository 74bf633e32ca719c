package extsigner

import (
	"fmt"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "extsigner"

// Sentinel errors. Every error the package returns matches one of them (or
// a jwks sentinel, for a key jwks refuses) with errors.Is; the typed errors
// below carry the details.
var (
	// ErrInvalidConfig matches every *ConfigError: a constructor got a
	// configuration it cannot use.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
	// ErrUnknownKeyID: no key of the ring has the key ID.
	ErrUnknownKeyID = errs.New(prefix, "no key with that key ID")
	// ErrDuplicateKeyID: a key ID is already in the ring.
	ErrDuplicateKeyID = errs.New(prefix, "key ID already in the ring")
	// ErrTooManyKeys: the ring already holds MaxKeys keys.
	ErrTooManyKeys = errs.New(prefix, "too many keys")
	// ErrTooEarly: a rotation step asked before it is safe (a key promoted
	// before every kube-apiserver and relying party can know it, or retired
	// while tokens it signed may be live). RotationError.ReadyAt says when.
	ErrTooEarly = errs.New(prefix, "rotation step too early")
	// ErrInvalidTransition: a rotation step that no waiting makes right
	// (retiring the primary, promoting a key that cannot sign).
	ErrInvalidTransition = errs.New(prefix, "invalid rotation step")
	// ErrInvalidClaims: the claims of a Sign request are not a strict
	// base64url JSON object within the limits.
	ErrInvalidClaims = errs.New(prefix, "invalid claims")
	// ErrSignerFailed: the signing key (a KMS or HSM call) returned an
	// error.
	ErrSignerFailed = errs.New(prefix, "signing key failed")
	// ErrSelfCheck: a signature the signing key returned does not verify
	// with the key the ring publishes; it was not handed out.
	ErrSelfCheck = errs.New(prefix, "signature does not verify with the published key")
	// ErrInvalidHeader: a JWT header breaks kube-apiserver's rules for an
	// external signer's header or the stricter ones of [CheckHeader].
	ErrInvalidHeader = errs.New(prefix, "invalid header")
	// ErrInvalidSignature: a signature is not strict base64url or does not
	// verify.
	ErrInvalidSignature = errs.New(prefix, "invalid signature")
	// ErrInvalidKeySet: a FetchKeys answer kube-apiserver would refuse, or
	// one that breaks the stricter rules of [CheckKeySet].
	ErrInvalidKeySet = errs.New(prefix, "invalid key set")
	// ErrInvalidMetadata: a Metadata answer kube-apiserver would refuse.
	ErrInvalidMetadata = errs.New(prefix, "invalid metadata")
	// ErrUnsupported: a feature this operating system lacks (peer
	// credentials, abstract sockets).
	ErrUnsupported = errs.New(prefix, "not supported on this system")
)

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "RingConfig.RefreshHint".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// KeyError reports a key the ring refuses or cannot find. It matches Kind:
// [ErrUnknownKeyID], [ErrDuplicateKeyID], [ErrTooManyKeys] or
// [ErrInvalidConfig]; a key jwks refuses also matches
// jwks.ErrUnsupportedKey through Err.
type KeyError struct {
	KeyID  string
	Reason string
	Kind   error
	Err    error
}

func (e *KeyError) Error() string {
	msg := e.Reason
	switch {
	case e.KeyID != "" && msg != "":
		msg = fmt.Sprintf("key %q: %s", e.KeyID, msg)
	case e.KeyID != "":
		msg = fmt.Sprintf("key %q", e.KeyID)
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is the error's Kind.
func (e *KeyError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *KeyError) Unwrap() error { return e.Err }

// RotationError reports a rotation step the ring refuses. It matches
// [ErrTooEarly] (ReadyAt says when the step becomes safe) or
// [ErrInvalidTransition].
type RotationError struct {
	// Step is "promote" or "retire".
	Step  string
	KeyID string
	// Role is the key's role when the step was asked.
	Role   Role
	Reason string
	// ReadyAt is when the step becomes safe, for ErrTooEarly; zero
	// otherwise.
	ReadyAt time.Time
	Kind    error
}

func (e *RotationError) Error() string {
	msg := fmt.Sprintf("cannot %s %s key %q: %s", e.Step, e.Role, e.KeyID, e.Reason)
	if !e.ReadyAt.IsZero() {
		msg += " (safe from " + e.ReadyAt.UTC().Format(time.RFC3339) + ")"
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is the error's Kind.
func (e *RotationError) Is(target error) bool { return target == e.Kind }

// ClaimsError reports claims the signer refuses to sign. It matches
// [ErrInvalidClaims].
type ClaimsError struct {
	Reason string
	Err    error
}

func (e *ClaimsError) Error() string {
	if e.Reason == "" {
		return errs.Msg(prefix, "claims refused", e.Err)
	}
	return errs.Msg(prefix, "claims "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidClaims].
func (e *ClaimsError) Is(target error) bool { return target == ErrInvalidClaims }

// Unwrap returns the cause, if any.
func (e *ClaimsError) Unwrap() error { return e.Err }

// SignError reports a signing key that failed or returned a signature that
// does not verify. It matches Kind: [ErrSignerFailed] or [ErrSelfCheck];
// Err is the signer's own error (a KMS client's, context.DeadlineExceeded).
type SignError struct {
	KeyID string
	Kind  error
	Err   error
}

func (e *SignError) Error() string {
	what := "signing key failed"
	if e.Kind == ErrSelfCheck {
		what = "answer withheld, the published key rejects it"
	}
	return errs.Msg(prefix, fmt.Sprintf("key %q: %s", e.KeyID, what), e.Err)
}

// Is reports whether target is the error's Kind.
func (e *SignError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *SignError) Unwrap() error { return e.Err }

// CheckError reports an answer of a signer (ours or another) that breaks a
// rule: a header, a signature, a key set or metadata. It matches Kind:
// [ErrInvalidHeader], [ErrInvalidSignature], [ErrInvalidKeySet] or
// [ErrInvalidMetadata]. Kubernetes is true when kube-apiserver itself
// applies the rule (it would refuse the answer), false for the stricter
// rules it skips (it would accept the answer, and tokens would fail later).
type CheckError struct {
	// Part is what was checked: "header", "signature", "key set",
	// "key #N" or "metadata".
	Part       string
	Reason     string
	Kubernetes bool
	Kind       error
	Err        error
}

func (e *CheckError) Error() string {
	msg := e.Part
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is the error's Kind.
func (e *CheckError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *CheckError) Unwrap() error { return e.Err }
