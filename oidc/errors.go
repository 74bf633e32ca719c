package oidc

import (
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/httpget"
)

// Sentinel errors; the typed errors below match them with errors.Is. A
// configuration a constructor or Render refuses is a *ksa.ConfigError
// naming the field: an issuer setting Kubernetes would refuse to publish
// (not https, a query or fragment, unparsable) is a field of IssuerConfig
// ("oidc.IssuerConfig.Issuer", ".JWKSURI", ".ExternalAddress"). An issuer
// with nothing to publish matches jwks.ErrNoKeys.
var (
	// ErrIssuerMismatch: a discovery document names another issuer than the
	// one asked for.
	ErrIssuerMismatch = errs.New(prefix, "issuer mismatch")
	// ErrDiscovery: a discovery document could not be fetched or read.
	ErrDiscovery = errs.New(prefix, "discovery failed")
	// ErrMalformedDocument: a discovery document is not the strict JSON
	// object ParseMetadata reads. A failed discovery also matches
	// ErrDiscovery.
	ErrMalformedDocument = errs.New(prefix, "malformed discovery document")
	// ErrNotReplaced: WriteStatic found a file where a document goes that
	// is not a document of that kind (a key, a directory, anything else),
	// and wrote nothing.
	ErrNotReplaced = errs.New(prefix, "file not replaced")
)

// prefix starts the messages of the package's errors.
const prefix = "oidc"

// configError refuses a field of a config struct of the package.
func configError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason, Err: cause}
}

// issuerError refuses an issuer setting, as Kubernetes' OIDC metadata
// provider does.
func issuerError(field, reason string, cause error) error {
	return configError("IssuerConfig."+field, reason, cause)
}

// IssuerMismatchError reports a discovery document for another issuer. It
// matches [ErrIssuerMismatch]. Issuers are compared as exact strings: a
// trailing slash is a difference.
type IssuerMismatchError struct {
	// Expected is the issuer discovery was asked for; Discovered is what
	// the document says.
	Expected, Discovered string
}

func (e *IssuerMismatchError) Error() string {
	msg := fmt.Sprintf("the discovery document names issuer %q, not %q", e.Discovered, e.Expected)
	if trimSlash(e.Discovered) == trimSlash(e.Expected) {
		msg += " (they differ by a trailing slash, which counts)"
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is [ErrIssuerMismatch].
func (e *IssuerMismatchError) Is(target error) bool { return target == ErrIssuerMismatch }

// DiscoveryError reports a discovery document that could not be fetched or
// read. It matches [ErrDiscovery] and wraps the cause (a *TimeoutError-like
// cause matches context.DeadlineExceeded).
type DiscoveryError struct {
	URL string
	// Status is the HTTP status, or 0 if no response arrived.
	Status int
	Reason string
	Err    error
}

func (e *DiscoveryError) Error() string {
	return httpget.Describe(prefix, "discovery at", e.URL, e.Reason, e.Err)
}

// Is reports whether target is [ErrDiscovery].
func (e *DiscoveryError) Is(target error) bool { return target == ErrDiscovery }

// Unwrap returns the cause, if any.
func (e *DiscoveryError) Unwrap() error { return e.Err }

// documentError reports a discovery document that does not parse, and the
// member at fault, if one is.
func documentError(member, reason string, cause error) error {
	msg := "discovery document"
	if member != "" {
		msg += fmt.Sprintf(" member %q", member)
	}
	return errs.Wrap(prefix, ErrMalformedDocument, msg+" "+reason, cause)
}
