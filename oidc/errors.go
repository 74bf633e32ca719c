package oidc

import (
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/internal/httpget"
)

// Sentinel errors; the typed errors below match them with errors.Is.
var (
	// ErrInvalidIssuer: an issuer URL or jwks_uri Kubernetes would refuse
	// to publish (not https, a query or fragment, unparsable).
	ErrInvalidIssuer = errors.New("oidc: invalid issuer configuration")
	// ErrNoKeys: nothing to publish (every key verify-only, or none).
	ErrNoKeys = errors.New("oidc: no keys provided for validating keyset")
	// ErrIssuerMismatch: a discovery document names another issuer than the
	// one asked for.
	ErrIssuerMismatch = errors.New("oidc: issuer mismatch")
	// ErrDiscovery: a discovery document could not be fetched or read.
	ErrDiscovery = errors.New("oidc: discovery failed")
)

// ConfigError reports an issuer configuration Kubernetes' OIDC metadata
// provider refuses, with Kubernetes' message. It matches [ErrInvalidIssuer].
type ConfigError struct {
	Reason string
	Err    error
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return "oidc: " + e.Reason + ": " + e.Err.Error()
	}
	return "oidc: " + e.Reason
}

// Is reports whether target is [ErrInvalidIssuer].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidIssuer }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// IssuerMismatchError reports a discovery document for another issuer. It
// matches [ErrIssuerMismatch]. Issuers are compared as exact strings: a
// trailing slash is a difference.
type IssuerMismatchError struct {
	// Expected is the issuer discovery was asked for; Discovered is what
	// the document says.
	Expected, Discovered string
}

func (e *IssuerMismatchError) Error() string {
	return fmt.Sprintf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", e.Expected, e.Discovered)
}

// Is reports whether target is [ErrIssuerMismatch].
func (e *IssuerMismatchError) Is(target error) bool { return target == ErrIssuerMismatch }

// DiscoveryError reports a discovery document that could not be fetched or
// read. It matches [ErrDiscovery] and wraps the cause.
type DiscoveryError struct {
	URL string
	// Status is the HTTP status, or 0 if no response arrived.
	Status int
	Reason string
	Err    error
}

func (e *DiscoveryError) Error() string {
	return httpget.Describe("oidc: discovery at", e.URL, e.Status, e.Reason, e.Err)
}

// Is reports whether target is [ErrDiscovery].
func (e *DiscoveryError) Is(target error) bool { return target == ErrDiscovery }

// Unwrap returns the cause, if any.
func (e *DiscoveryError) Unwrap() error { return e.Err }
