package keystore

import (
	"strconv"
	"strings"

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
	// ErrLoginRefused matches a key store that refused to log in with the
	// credentials the key's reference gives: a PKCS #11 token that refused
	// the PIN (CKR_PIN_INCORRECT and the other CKR_PIN_ codes) or whose PIN
	// is locked. The same credentials fail again, and on an HSM every
	// failed login counts toward locking the PIN or the partition: try
	// again only once they changed. It matches ErrKeyStore too.
	ErrLoginRefused = errs.Wrap(prefix, ErrKeyStore, "login refused", nil)
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

// StoreError is a key store's failure to open, create or sign with a key,
// in the words of an operator: the key's reference, what went wrong and
// how to fix it, so that a program can say it in its own terms (a flag's
// name) without parsing the message. It matches Kind ([ErrKeyStore],
// [ErrLoginRefused], [ErrUnsupportedStore] or jwks.ErrUnsupportedKey) and
// wraps the store's error. The key store packages (keystore/pkcs11,
// keystore/awskms, keystore/cloudkms, keystore/azurekms) and [Openers]
// return it.
type StoreError struct {
	// Ref is the key's reference, as [Ref.String] shows it: no secret.
	Ref string
	// What says what went wrong: "the token refused the PIN".
	What string
	// Detail is what of the store's own error is worth showing
	// ("CKR_PIN_INCORRECT", "connection refused"); empty when What says
	// it all.
	Detail string
	// Fix says how to put it right.
	Fix string
	// Kind is the sentinel the error matches.
	Kind error
	// Err is the store's error, or nil.
	Err error
}

// Error returns "keystore: REF: WHAT: DETAIL; FIX" on one line.
func (e *StoreError) Error() string {
	msg := e.Ref + ": " + e.What
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return errs.Msg(prefix, strings.Join(strings.Fields(msg), " "), nil)
}

// Unwrap returns the kind and the store's error.
func (e *StoreError) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}
