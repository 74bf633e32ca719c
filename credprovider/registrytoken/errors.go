package registrytoken

import (
	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "registrytoken"

// Sentinel errors. Every refusal of a [Server] matches one of them with
// errors.Is, and the HTTP status its handler answers follows from it
// ([StatusFor]); no message quotes the token.
var (
	// ErrUnauthenticated: the request carries no usable credential (no
	// Authorization header, a scheme other than Basic or Bearer, a
	// malformed Basic pair, a username other than the configured one).
	// HTTP 401.
	ErrUnauthenticated = errs.New(prefix, "unauthenticated token request")
	// ErrTokenRefused: the service-account token failed verification
	// (signature, issuer, audience, expiry, pod binding); it also matches
	// the verifier's own sentinel (tokens.ErrExpired, ...). HTTP 401.
	ErrTokenRefused = errs.New(prefix, "service account token refused")
	// ErrBadRequest: the request is not a token request this service
	// answers (another service, a malformed scope, too many scopes, a
	// method other than GET). HTTP 400 (405 for the method).
	ErrBadRequest = errs.New(prefix, "bad token request")
	// ErrTooLarge: the query or the Authorization header is over its
	// limit (MaxQueryBytes, MaxAuthorizationBytes); it was not parsed.
	// HTTP 400.
	ErrTooLarge = errs.New(prefix, "token request too large")
	// ErrDenied: scopes were asked for and no rule grants the service
	// account any of their actions. HTTP 403.
	ErrDenied = errs.New(prefix, "access denied")
	// ErrIssue: the registry token could not be signed. HTTP 500.
	ErrIssue = errs.New(prefix, "registry token not issued")
)

func wrap(kind error, msg string, cause error) error {
	text := errs.Text(kind)
	if msg != "" {
		text += ": " + msg
	}
	return errs.Wrap(prefix, kind, text, cause)
}

func configError(field, reason string) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason}
}

func configCause(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason, Err: cause}
}
