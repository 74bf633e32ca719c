package workloadapi

import (
	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "workloadapi"

// Sentinel errors. A load of the mounted files fails with podcert's
// errors (podcert.ErrInvalidBundle, podcert.ErrInvalidTrustBundle,
// podcert.ErrLimit); refused configurations are a *ksa.ConfigError.
var (
	// ErrNoIdentity: no identity valid now is served (none loaded yet, or
	// the last one expired).
	ErrNoIdentity = errs.New(prefix, "no identity")
	// ErrRefused: a credential that loaded cannot be served (no SPIFFE ID,
	// no trust bundle for its trust domain, a chain its trust bundle does
	// not verify, an answer over MaxResponseBytes); the last one served
	// stays.
	ErrRefused = errs.New(prefix, "credential refused")
	// ErrFolder: the credential folder could not be written.
	ErrFolder = errs.New(prefix, "credential folder not written")
)

// wrap returns an error of the package matching kind, reading
// "workloadapi: <msg>: <cause>".
func wrap(kind error, msg string, cause error) error { return errs.Wrap(prefix, kind, msg, cause) }
