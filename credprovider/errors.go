package credprovider

import (
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "credprovider"

// Sentinel errors. Every refusal of the package matches one of them with
// errors.Is; the message says what was wrong. A refused token also matches
// the sentinel of package tokens that says why (tokens.ErrExpired,
// tokens.ErrAudienceMismatch, ...).
var (
	// ErrMalformedRequest: the kubelet's request is not a strict
	// CredentialProviderRequest of credentialprovider.kubelet.k8s.io/v1
	// (not JSON, another apiVersion or kind, an unknown, duplicate or
	// mistyped member, no image).
	ErrMalformedRequest = errs.New(prefix, "malformed credential provider request")
	// ErrRequestTooLarge: the request is over MaxRequestBytes; it was not
	// parsed.
	ErrRequestTooLarge = errs.New(prefix, "credential provider request too large")
	// ErrNoToken: the request carries no service-account token where one is
	// required.
	ErrNoToken = errs.New(prefix, "no service account token in the request")
	// ErrTokenRefused: the request's token failed the offline check
	// (signature, issuer, audience, expiry or pod binding).
	ErrTokenRefused = errs.New(prefix, "service account token refused")
	// ErrInvalidResponse: a response could not be built or written as
	// asked (an empty password, a credential already expired, a cache key
	// type the kubelet does not know).
	ErrInvalidResponse = errs.New(prefix, "invalid credential provider response")
)

func malformed(format string, args ...any) error {
	return errs.Wrap(prefix, ErrMalformedRequest, errs.Text(ErrMalformedRequest)+": "+fmt.Sprintf(format, args...), nil)
}

func malformedCause(msg string, cause error) error {
	return errs.Wrap(prefix, ErrMalformedRequest, errs.Text(ErrMalformedRequest)+": "+msg, cause)
}

func invalidResponse(format string, args ...any) error {
	return errs.Wrap(prefix, ErrInvalidResponse, errs.Text(ErrInvalidResponse)+": "+fmt.Sprintf(format, args...), nil)
}

func tokenRefused(msg string, cause error) error {
	text := errs.Text(ErrTokenRefused)
	if msg != "" {
		text += ": " + msg
	}
	return errs.Wrap(prefix, ErrTokenRefused, text, cause)
}

func wrap(kind error, msg string, cause error) error { return errs.Wrap(prefix, kind, msg, cause) }

// configError refuses a field of the package's config.
func configError(field, reason string) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason}
}
