package stepkms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/ksa-go/ksa/keystore"
)

// ErrClosed is the cause of an open after the store's Close.
var ErrClosed = errors.New("the key store is closed")

// StoreError returns a keystore.StoreError of kind keystore.ErrKeyStore,
// its detail taken from err.
func StoreError(r keystore.Ref, what, fix string, err error) *keystore.StoreError {
	return &keystore.StoreError{Ref: r.String(), What: what, Fix: fix, Kind: keystore.ErrKeyStore, Err: err, Detail: Detail(err)}
}

// Closed is the error of an open or a creation after Close.
func Closed(r keystore.Ref) *keystore.StoreError {
	return StoreError(r, "cannot be opened", "open keys before closing the key store", ErrClosed)
}

// Detail is the part of a store's error worth quoting: for a deadline or
// a cancellation that, for a network failure the innermost network error,
// else the text without the wrapping prefixes go.step.sm adds.
func Detail(err error) string {
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
	return strings.Join(strings.Fields(strings.TrimPrefix(msg, "keystore: ")), " ")
}

// CtxError is the error of an ended ctx, with its cause.
func CtxError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), cause)
	}
	return ctx.Err()
}
