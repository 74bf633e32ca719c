package federation

import (
	"fmt"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors. Every error of the package matches one with errors.Is,
// except that a credential that cannot be built is a *ksa.ConfigError
// (matching ksa.ErrInvalidConfig) and a token file that cannot be used is
// reported with the file source's error (matching tokens.ErrTokenFile). A
// *[PreflightError] says what the assertion holds and what was wanted; an
// *[EntraError] carries Entra ID's AADSTS code and the fix. Entra's
// refusals of a check match the pre-flight sentinel of that check
// (AADSTS700212 matches [ErrAssertionAudience], ...), so one errors.Is
// covers both.
var (
	// Pre-flight: the assertion would be refused; nothing was sent.

	// ErrAssertionAudience: the token's aud does not contain the audience
	// the federated credential expects (pre-flight), or no federated
	// credential has the token's audience (AADSTS700212).
	ErrAssertionAudience = errs.New(prefix, "assertion audience mismatch")
	// ErrAssertionIssuer: the token's iss is not the configured issuer
	// (pre-flight), or no federated credential has the token's issuer
	// (AADSTS700211).
	ErrAssertionIssuer = errs.New(prefix, "assertion issuer mismatch")
	// ErrAssertionSubject: the token's sub is not the configured subject
	// (pre-flight), or no federated credential has the token's subject
	// (AADSTS700213). Entra often answers a subject mismatch with
	// AADSTS70021 instead: check [ErrNoMatchingCredential] too.
	ErrAssertionSubject = errs.New(prefix, "assertion subject mismatch")
	// ErrAssertionExpired: the token is expired or about to expire
	// (pre-flight), or Entra refused it as outside its validity window
	// (AADSTS700024).
	ErrAssertionExpired = errs.New(prefix, "assertion expired")
	// ErrAssertionMalformed: the token source gave something that is not a
	// compact JWT with readable claims; it also matches tokens'
	// ErrMalformed or ErrTooLarge.
	ErrAssertionMalformed = errs.New(prefix, "assertion malformed")

	// Entra ID's answers, mapped from AADSTS codes.

	// ErrNoMatchingCredential: AADSTS70021, no federated identity credential
	// matches the assertion's issuer, subject and audience.
	ErrNoMatchingCredential = errs.New(prefix, "no matching federated identity credential")
	// ErrSigningKeyNotFound: AADSTS7000272, the assertion's kid is not in
	// the issuer's published JWKS.
	ErrSigningKeyNotFound = errs.New(prefix, "assertion signing key not in the issuer's metadata")
	// ErrIssuerUnreachable: AADSTS90061, Entra could not fetch the issuer's
	// discovery document or JWKS.
	ErrIssuerUnreachable = errs.New(prefix, "issuer metadata unreachable from Entra ID")
	// ErrEntra: any error answer from Entra ID; every *[EntraError]
	// matches it.
	ErrEntra = errs.New(prefix, "token request refused by Entra ID")
)

// prefix starts the messages of the package's errors.
const prefix = "federation"

// PreflightError reports an assertion refused before it was sent, naming
// what does not match. It matches the sentinel of the check.
type PreflightError struct {
	// Check is "audience", "issuer", "subject", "expiry" or "format".
	Check string
	// Want is the expected value; Got what the token holds.
	Want, Got string
	// Hint names the usual cause, if any.
	Hint string
	// Sentinel is the check's sentinel: [ErrAssertionAudience], ...
	Sentinel error
	// Err is the cause, for an assertion that cannot be read.
	Err error
}

func (e *PreflightError) Error() string {
	if e.Want == "" && e.Got == "" {
		return errs.Msg(prefix, "assertion "+e.Check, e.Err)
	}
	msg := fmt.Sprintf("assertion %s: want %q, token has %q", e.Check, e.Want, e.Got)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is the check's sentinel.
func (e *PreflightError) Is(target error) bool { return target == e.Sentinel }

// Unwrap returns the cause, if any.
func (e *PreflightError) Unwrap() error { return e.Err }

// EntraError is an error answer of Entra ID's token endpoint, with the
// AADSTS code, Entra's description, and what to do about it. It matches
// [ErrEntra] and the sentinel of the code, if it has one, and wraps
// azidentity's error.
type EntraError struct {
	// Code is the AADSTS number, 0 if none could be read.
	Code        int
	Description string
	// Fix says what usually resolves the error.
	Fix string
	// Sentinel is the code's sentinel ([ErrAssertionAudience] for
	// AADSTS700212, ...), or nil.
	Sentinel error
	Err      error
}

func (e *EntraError) Error() string {
	var b strings.Builder
	b.WriteString(prefix + ": Entra ID refused the token request")
	if e.Code != 0 {
		fmt.Fprintf(&b, " (AADSTS%d)", e.Code)
	}
	if d := strings.TrimPrefix(firstLine(e.Description), fmt.Sprintf("AADSTS%d: ", e.Code)); d != "" {
		b.WriteString(": ")
		b.WriteString(strings.TrimRight(d, ". "))
	}
	if e.Fix != "" {
		b.WriteString(". Fix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// Is reports whether target is [ErrEntra] or the code's sentinel.
func (e *EntraError) Is(target error) bool {
	return target == ErrEntra || (e.Sentinel != nil && target == e.Sentinel)
}

// Unwrap returns azidentity's error.
func (e *EntraError) Unwrap() error { return e.Err }

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
