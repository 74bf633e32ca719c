package podcert

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "podcert"

// Sentinel errors. Every rejection matches one of them with [errors.Is]
// and names what was wrong in its message; a status update's problems are
// a list of *[StatusError], one per field. Keys of a type or size pod
// certificates do not allow match jwks.ErrUnsupportedKey; configurations a
// constructor refuses are a *ksa.ConfigError.
var (
	// ErrInvalidRequest: a PodCertificateRequest's spec cannot be used (a
	// missing or malformed field, a stub CSR that is not empty), or its
	// holder did not prove possession of the key (the stub CSR's
	// self-signature, or the older proof of possession, does not verify).
	ErrInvalidRequest = errs.New(prefix, "invalid request")
	// ErrAnnotation: an unverifiedUserAnnotations entry is unknown,
	// malformed, too large or refused by the policy.
	ErrAnnotation = errs.New(prefix, "unverified user annotation refused")
	// ErrLimit: an input is over a documented size limit.
	ErrLimit = errs.New(prefix, "size limit exceeded")
	// ErrInvalidStatus: a status update the API server would refuse. See
	// [StatusError].
	ErrInvalidStatus = errs.New(prefix, "invalid status")
	// ErrSigning: the CA's signer or the random source failed; the request
	// may be retried.
	ErrSigning = errs.New(prefix, "signing failed")
	// ErrInvalidBundle: credential files (a mounted bundle, a key and a
	// chain) cannot be used.
	ErrInvalidBundle = errs.New(prefix, "invalid credential bundle")
	// ErrInvalidTrustBundle: a trust bundle (a ClusterTrustBundle's
	// certificates, a trust bundle file) cannot be used.
	ErrInvalidTrustBundle = errs.New(prefix, "invalid trust bundle")
)

// wrap returns an error of the package matching kind, reading
// "podcert: <msg>: <cause>".
func wrap(kind error, msg string, cause error) error { return errs.Wrap(prefix, kind, msg, cause) }

// limit reports an input over a documented limit, matching [ErrLimit].
func limit(what string, size, max int) error {
	return wrap(ErrLimit, fmt.Sprintf("%d %s is over the limit of %d", size, what, max), nil)
}

// requestError reports a request field that cannot be used, naming the
// spec field ("spec.stubPKCS10Request"). It matches [ErrInvalidRequest]
// and wraps cause (a *ksa.NameError for a bad name, a limit error for a
// size), if any.
func requestError(field, reason string, cause error) error {
	if reason != "" {
		field += ": " + reason
	}
	return wrap(ErrInvalidRequest, field, cause)
}

// StatusError reports one way a status update breaks the API server's
// rules: the field at fault, as kube-apiserver's field errors name it.
// It matches [ErrInvalidStatus]. Several are joined in one error whose
// message lists them; errors.As finds the first.
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
