package tokenreview

import (
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "tokenreview"

// Sentinel errors. Every refusal of a [Validator] matches one of them, or
// one of package tokens' for a refusal of local validation; the message
// says what the apiserver answered. A config New refuses is a
// *ksa.ConfigError.
var (
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

// MaxErrorText bounds how much of the apiserver's status.error, or of a
// value of its answer, a refusal quotes.
const MaxErrorText = 256

// reviewFailed reports a TokenReview that could not be made.
func reviewFailed(cause error) error {
	return errs.Wrap(prefix, ErrReviewFailed, "", cause)
}

// refused reports the apiserver's refusal of the token, with its
// status.error (at most MaxErrorText bytes of it).
func refused(reason string) error {
	msg := ""
	if reason != "" {
		msg = fmt.Sprintf("%s (%q)", errs.Text(ErrNotAuthenticated), bounded(reason))
	}
	return errs.Wrap(prefix, ErrNotAuthenticated, msg, nil)
}

// mismatch reports an answer that contradicts the token (validated
// locally) or the request: field names what differs, want is what the
// token or request says, got what the review said (at most MaxErrorText
// bytes of it).
func mismatch(field, want, got string, cause error) error {
	return errs.Wrap(prefix, ErrMismatch, fmt.Sprintf("%s: %s is %q in the review, want %s", errs.Text(ErrMismatch), field, bounded(got), want), cause)
}

// configError refuses a field of the package's config.
func configError(field, reason string) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason}
}

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
