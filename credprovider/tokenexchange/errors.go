package tokenexchange

import (
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "tokenexchange"

// Sentinel errors: every failed exchange matches one of them; a refusal
// of the token endpoint is also a *[RefusedError] carrying its answer.
var (
	// ErrExchangeFailed: the token endpoint could not be asked (transport,
	// timeout, the caller's context) or answered with a server error.
	ErrExchangeFailed = errs.New(prefix, "token exchange failed")
	// ErrRefused: the token endpoint refused the exchange (an HTTP 4xx,
	// usually an OAuth error such as invalid_grant).
	ErrRefused = errs.New(prefix, "token exchange refused")
	// ErrBadResponse: the token endpoint's answer is not a token response
	// RFC 8693 defines (not JSON, over the size limit, no access_token,
	// a token type the config does not accept, a negative expires_in).
	ErrBadResponse = errs.New(prefix, "invalid token exchange response")
)

// MaxErrorText bounds how much of an endpoint's error_description a
// RefusedError keeps.
const MaxErrorText = 256

// RefusedError is the token endpoint's refusal. It matches [ErrRefused].
type RefusedError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code and Description are the OAuth error and error_description, when
	// the body held them (Description at most MaxErrorText bytes).
	Code, Description string
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", errs.Text(ErrRefused), e.StatusCode)
	if e.Code != "" {
		msg += fmt.Sprintf(", %q", e.Code)
	}
	if e.Description != "" {
		msg += fmt.Sprintf(" (%q)", e.Description)
	}
	return errs.Msg(prefix, msg, nil)
}

// Is matches ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func failed(msg string, cause error) error {
	text := errs.Text(ErrExchangeFailed)
	if msg != "" {
		text += ": " + msg
	}
	return errs.Wrap(prefix, ErrExchangeFailed, text, cause)
}

func badResponse(msg string, cause error) error {
	return errs.Wrap(prefix, ErrBadResponse, errs.Text(ErrBadResponse)+": "+msg, cause)
}

func configError(field, reason string) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason}
}
