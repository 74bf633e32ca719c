package oidc

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/httpget"
)

// Sentinel errors; the typed errors below match them with errors.Is. An
// issuer with nothing to publish matches jwks.ErrNoKeys.
var (
	// ErrInvalidConfig: a constructor or Render got a configuration it
	// cannot use.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
	// ErrInvalidIssuer: an issuer URL or jwks_uri Kubernetes would refuse
	// to publish (not https, a query or fragment, unparsable). It is a kind
	// of ErrInvalidConfig.
	ErrInvalidIssuer = errs.New(prefix, "invalid issuer configuration")
	// ErrIssuerMismatch: a discovery document names another issuer than the
	// one asked for.
	ErrIssuerMismatch = errs.New(prefix, "issuer mismatch")
	// ErrDiscovery: a discovery document could not be fetched or read.
	ErrDiscovery = errs.New(prefix, "discovery failed")
	// ErrMalformedDocument: a discovery document is not the strict JSON
	// object ParseMetadata reads. A failed discovery also matches
	// ErrDiscovery.
	ErrMalformedDocument = errs.New(prefix, "malformed discovery document")
)

// prefix starts the messages of the package's errors.
const prefix = "oidc"

// ConfigError reports a configuration that cannot be used, with the field
// at fault. It matches [ErrInvalidConfig], and [ErrInvalidIssuer] for the
// issuer settings Kubernetes' OIDC metadata provider refuses (the issuer
// URL, jwks_uri and external address).
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "IssuerConfig.Issuer".
	Field  string
	Reason string
	Err    error
	// issuer is set for the issuer settings.
	issuer bool
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig], or [ErrInvalidIssuer]
// for an issuer setting.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || (e.issuer && target == ErrInvalidIssuer)
}

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// issuerError reports an issuer setting Kubernetes refuses.
func issuerError(field, reason string, err error) *ConfigError {
	return &ConfigError{Field: "IssuerConfig." + field, Reason: reason, Err: err, issuer: true}
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

// DocumentError reports a discovery document that does not parse. It
// matches [ErrMalformedDocument].
type DocumentError struct {
	// Member is the member at fault, if one is.
	Member string
	Reason string
	Err    error
}

func (e *DocumentError) Error() string {
	msg := "discovery document"
	if e.Member != "" {
		msg += fmt.Sprintf(" member %q", e.Member)
	}
	return errs.Msg(prefix, msg+" "+e.Reason, e.Err)
}

// Is reports whether target is [ErrMalformedDocument].
func (e *DocumentError) Is(target error) bool { return target == ErrMalformedDocument }

// Unwrap returns the cause, if any.
func (e *DocumentError) Unwrap() error { return e.Err }
