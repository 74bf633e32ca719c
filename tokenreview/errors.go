package tokenreview

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "tokenreview"

// Sentinel errors. Every refusal of a [Validator] matches one of them, or
// one of package tokens' for a refusal of local validation.
var (
	// ErrInvalidConfig: New got a configuration it cannot use.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
	// ErrReviewFailed: the TokenReview could not be made (transport,
	// permissions, no answer). The token is refused: a validator that
	// cannot ask never accepts.
	ErrReviewFailed = errs.New(prefix, "token review failed")
	// ErrNotAuthenticated: kube-apiserver answered that the token is not
	// valid: revoked (its pod, secret or service account deleted), expired,
	// or never valid.
	ErrNotAuthenticated = errs.New(prefix, "token not authenticated by the apiserver")
	// ErrMismatch: the apiserver's answer contradicts the token or the
	// request (another user, pod UID or audience): the answer is not
	// trusted.
	ErrMismatch = errs.New(prefix, "review does not match the token")
)

// MaxErrorText bounds how much of the apiserver's status.error a
// [RefusedError] keeps.
const MaxErrorText = 256

// ConfigError reports a configuration New cannot use. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "Config.Reviewer".
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return errs.Msg(prefix, e.Field+" "+e.Reason, nil)
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ReviewError reports a TokenReview that could not be made.
type ReviewError struct {
	Err error
}

func (e *ReviewError) Error() string {
	return errs.Msg(prefix, "token review failed", e.Err)
}

// Is reports whether target is [ErrReviewFailed].
func (e *ReviewError) Is(target error) bool { return target == ErrReviewFailed }

// Unwrap returns the cause.
func (e *ReviewError) Unwrap() error { return e.Err }

// RefusedError reports that kube-apiserver refused the token; Reason is its
// status.error, at most MaxErrorText bytes.
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Reason == "" {
		return errs.Msg(prefix, "token not authenticated by the apiserver", nil)
	}
	return errs.Msg(prefix, fmt.Sprintf("token not authenticated by the apiserver (%q)", e.Reason), nil)
}

// Is reports whether target is [ErrNotAuthenticated].
func (e *RefusedError) Is(target error) bool { return target == ErrNotAuthenticated }

// MismatchError reports an answer that contradicts the token (validated
// locally) or the request: Field names what differs; Want is what the
// token or request says, Got what the review said.
type MismatchError struct {
	Field, Want, Got string
	// Err is the cause, if any (an unreadable username).
	Err error
}

func (e *MismatchError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("review does not match the token: %s is %q in the review, want %s", e.Field, e.Got, e.Want), e.Err)
}

// Unwrap returns the cause, if any.
func (e *MismatchError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrMismatch].
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// bounded cuts s to MaxErrorText bytes, on a rune boundary.
func bounded(s string) string {
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
