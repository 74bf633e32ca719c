package podcert

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// prefix starts the messages of the package's errors.
const prefix = "podcert"

// Sentinel errors. Every rejection matches one of them with [errors.Is]; the
// typed errors below carry the data a caller acts on.
var (
	// ErrInvalidRequest: a PodCertificateRequest's spec cannot be used (a
	// missing or malformed field, a stub CSR that is not empty). See
	// [RequestError].
	ErrInvalidRequest = errs.New(prefix, "invalid request")
	// ErrProof: the stub CSR's self-signature, or the older proof of
	// possession, does not verify. It also matches [ErrInvalidRequest].
	ErrProof = errs.New(prefix, "proof of possession does not verify")
	// ErrUnsupportedKey: the requested key is not one of RSA 3072 or 4096,
	// ECDSA P-256, P-384 or P-521, or Ed25519. See [KeyError]; it also
	// matches jwks.ErrUnsupportedKey.
	ErrUnsupportedKey = errs.New(prefix, "unsupported key type")
	// ErrAnnotation: an unverifiedUserAnnotations entry is unknown,
	// malformed, too large or refused by the policy. See [AnnotationError].
	ErrAnnotation = errs.New(prefix, "unverified user annotation refused")
	// ErrLimit: an input is over a documented size limit. See [LimitError].
	ErrLimit = errs.New(prefix, "size limit exceeded")
	// ErrInvalidStatus: a status update the API server would refuse. See
	// [StatusError].
	ErrInvalidStatus = errs.New(prefix, "invalid status")
	// ErrSigning: the CA's signer or the random source failed. See
	// [SigningError]; the request may be retried.
	ErrSigning = errs.New(prefix, "signing failed")
	// ErrInvalidBundle: a mounted credential bundle cannot be used. See
	// [BundleError].
	ErrInvalidBundle = errs.New(prefix, "invalid credential bundle")
	// ErrInvalidConfig: a constructor got options it cannot use. See
	// [ConfigError].
	ErrInvalidConfig = errs.New(prefix, "invalid options")
)

// RequestError reports a request field that cannot be used. It matches
// [ErrInvalidRequest], and [ErrProof] when Proof is set; Err, when set, is
// the cause (a *ksa.NameError for a bad name, a *[LimitError] for a size).
type RequestError struct {
	// Field is the spec field, such as "spec.stubPKCS10Request".
	Field  string
	Reason string
	// Proof is set when a signature proving possession of the key fails.
	Proof bool
	Err   error
}

func (e *RequestError) Error() string {
	if e.Reason == "" {
		return errs.Msg(prefix, e.Field, e.Err)
	}
	return errs.Msg(prefix, e.Field+": "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidRequest], or [ErrProof] for a
// failed proof.
func (e *RequestError) Is(target error) bool {
	return target == ErrInvalidRequest || (e.Proof && target == ErrProof)
}

// Unwrap returns the cause, if any.
func (e *RequestError) Unwrap() error { return e.Err }

// KeyError reports a requested key of a type or size pod certificates do
// not allow. It matches [ErrUnsupportedKey] and jwks.ErrUnsupportedKey.
type KeyError struct {
	// Key describes the key: "RSA 2048", "ECDSA P-224", "DSA", ...
	Key string
	Err error
}

func (e *KeyError) Error() string {
	return errs.Msg(prefix, "key "+e.Key+" is not supported (want RSA 3072 or 4096, ECDSA P-256, P-384 or P-521, or Ed25519)", e.Err)
}

// Is reports whether target is [ErrUnsupportedKey] or jwks.ErrUnsupportedKey.
func (e *KeyError) Is(target error) bool {
	return target == ErrUnsupportedKey || target == jwks.ErrUnsupportedKey
}

// Unwrap returns the cause, if any.
func (e *KeyError) Unwrap() error { return e.Err }

// AnnotationError reports an unverifiedUserAnnotations entry that is not
// honoured. It matches [ErrAnnotation]; Err, when set, is the cause (an
// x509sa host or extension error, or the policy's error).
type AnnotationError struct {
	// Key is the annotation key ("" for the annotations as a whole).
	Key    string
	Reason string
	Err    error
}

func (e *AnnotationError) Error() string {
	if e.Key == "" {
		return errs.Msg(prefix, "unverified user annotations: "+e.Reason, e.Err)
	}
	return errs.Msg(prefix, fmt.Sprintf("unverified user annotation %q: %s", e.Key, e.Reason), e.Err)
}

// Is reports whether target is [ErrAnnotation].
func (e *AnnotationError) Is(target error) bool { return target == ErrAnnotation }

// Unwrap returns the cause, if any.
func (e *AnnotationError) Unwrap() error { return e.Err }

// LimitError reports an input over a documented limit. It matches
// [ErrLimit].
type LimitError struct {
	// What names the limited quantity ("stub CSR bytes", "bundle bytes").
	What  string
	Size  int
	Limit int
}

func (e *LimitError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%d %s is over the limit of %d", e.Size, e.What, e.Limit), nil)
}

// Is reports whether target is [ErrLimit].
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// StatusError reports one way a status update breaks the API server's
// rules. It matches [ErrInvalidStatus]. Several are joined in one error
// whose message lists them.
type StatusError struct {
	// Field is the status field, such as "status.notBefore".
	Field  string
	Reason string
}

func (e *StatusError) Error() string {
	return errs.Msg(prefix, e.Field+": "+e.Reason, nil)
}

// Is reports whether target is [ErrInvalidStatus].
func (e *StatusError) Is(target error) bool { return target == ErrInvalidStatus }

// SigningError reports a signer or random source that failed. It matches
// [ErrSigning] and wraps the cause.
type SigningError struct {
	Reason string
	Err    error
}

func (e *SigningError) Error() string { return errs.Msg(prefix, e.Reason, e.Err) }

// Is reports whether target is [ErrSigning].
func (e *SigningError) Is(target error) bool { return target == ErrSigning }

// Unwrap returns the cause.
func (e *SigningError) Unwrap() error { return e.Err }

// BundleError reports a credential bundle that cannot be used. It matches
// [ErrInvalidBundle]; Err, when set, is the cause.
type BundleError struct {
	// Path is the file, when read from one.
	Path   string
	Reason string
	Err    error
}

func (e *BundleError) Error() string {
	msg := "credential bundle"
	if e.Path != "" {
		msg += " " + e.Path
	}
	return errs.Msg(prefix, msg+": "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidBundle].
func (e *BundleError) Is(target error) bool { return target == ErrInvalidBundle }

// Unwrap returns the cause, if any.
func (e *BundleError) Unwrap() error { return e.Err }

// ConfigError reports an option a constructor cannot use. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string {
	return errs.Msg(prefix, "configuration "+e.Field+": "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
