package keystores

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/ksa-go/ksa/keystore"
)

// ErrLoginRefused matches a key store that refused to log in with the
// credentials the key's reference gives: a PKCS #11 token that refused the
// PIN (CKR_PIN_INCORRECT, and the other CKR_PIN_ codes) or whose PIN is
// locked. The same credentials fail again, and on an HSM every failed
// login counts toward locking the PIN or the partition: try again only
// once they changed. It matches keystore.ErrKeyStore too.
var ErrLoginRefused = fmt.Errorf("%w: login refused", keystore.ErrKeyStore)

// Error is a key store's failure to open, create or sign with a key, in
// the words of an operator: the key's reference, what went wrong and how
// to fix it. It matches Kind (keystore.ErrKeyStore,
// keystore.ErrUnsupportedStore, jwks.ErrUnsupportedKey) and wraps the
// store's error.
type Error struct {
	// Ref is the key's reference, without secrets.
	Ref string
	// What says what went wrong.
	What string
	// Detail is what of the store's error is worth showing ("CKR_PIN_INCORRECT",
	// "connection refused"); empty when What says it all.
	Detail string
	// Fix says how to put it right.
	Fix string
	// Kind is the sentinel the error matches.
	Kind error
	// Err is the store's error.
	Err error
}

func (e *Error) Error() string {
	msg := e.Ref + ": " + e.What
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return oneLine(msg)
}

// Unwrap returns the kind and the store's error.
func (e *Error) Unwrap() []error {
	out := []error{e.Kind}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// storeError returns an Error of kind keystore.ErrKeyStore.
func storeError(ref keystore.Ref, what, fix string, err error) *Error {
	return &Error{Ref: ref.String(), What: what, Fix: fix, Kind: keystore.ErrKeyStore, Err: err, Detail: detail(err)}
}

// detail is the part of a store's error worth quoting: for a network
// failure the innermost network error, for a deadline the deadline, else
// the text after the wrapping prefixes step-ca's library adds.
func detail(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer before the deadline"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	msg := err.Error()
	for _, p := range []string{"createSigner failed: ", "createKey failed: ", "error initializing PKCS#11: ", "getPublicKey failed: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return oneLine(strings.TrimPrefix(msg, "keystore: "))
}

// oneLine replaces line breaks with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}
