package keystore

import (
	"strconv"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "keystore"

// Sentinel errors of the package. A refused reference is a *[RefError]
// matching ErrInvalidRef; the other failures of opening a key match one of
// the others and wrap their cause.
var (
	// ErrKeyFile matches a key file that cannot be opened or read; the
	// error also matches the cause (fs.ErrNotExist, fs.ErrPermission,
	// ...). A file that is read but holds no usable key matches
	// jwks.ErrMalformedPEM, jwks.ErrNoKeys or jwks.ErrUnsupportedKey
	// instead.
	ErrKeyFile = errs.New(prefix, "key file unreadable")
	// ErrInvalidRef matches a key reference refused before any key store
	// is asked: a malformed URI, an unknown scheme, an attribute missing,
	// unknown or not allowed (pin-value, client-secret). Every
	// *[RefError] matches it.
	ErrInvalidRef = errs.New(prefix, "invalid key reference")
	// ErrUnsupportedStore matches a reference whose key store the program
	// does not link: [Files] opens PEM files only, and a program built
	// without a key store's backend cannot open its keys.
	ErrUnsupportedStore = errs.New(prefix, "key store not supported")
	// ErrKeyStore matches a key store that failed or refused: its PIN
	// file unreadable or the PIN refused, the key missing, the store
	// unreachable, a signature it did not make. The error wraps the
	// store's own error (and context.DeadlineExceeded when the caller's
	// deadline passed).
	ErrKeyStore = errs.New(prefix, "key store failed")
)

// RefError reports a key reference refused before any key store is asked.
// It matches [ErrInvalidRef].
type RefError struct {
	// Ref is the reference as written, with the values of secret
	// attributes (pin-value, client-secret) replaced by REDACTED; empty
	// when it cannot be shown safely (an attribute ksa does not know, a
	// malformed %-escape, an unknown scheme).
	Ref string
	// Reason says what is wrong: "names no key", "has an unknown scheme
	// \"pkcs12\"".
	Reason string
	// Fix says how to write the reference instead.
	Fix string
}

func (e *RefError) Error() string {
	msg := "key reference"
	if e.Ref != "" {
		msg += " " + strconv.Quote(e.Ref)
	}
	msg += " " + e.Reason
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is [ErrInvalidRef].
func (e *RefError) Is(target error) bool { return target == ErrInvalidRef }
