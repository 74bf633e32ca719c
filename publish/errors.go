package publish

import (
	"errors"
	"strconv"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the package's error messages.
const prefix = "publish"

// The kinds of a store's failure, matched with errors.Is; an [*Error]
// holds one of them.
var (
	// ErrLocation: the location names no store, or not as written.
	ErrLocation = errs.New(prefix, "bad location")
	// ErrNoOpener: no opener for the location's kind of store (see
	// Config.Openers).
	ErrNoOpener = errs.New(prefix, "no opener for the kind of store")
	// ErrNoCredentials: the cloud's default chain found no credentials,
	// or they were refused as credentials (expired, malformed).
	ErrNoCredentials = errs.New(prefix, "no credentials")
	// ErrNotFound: the bucket, container or object does not exist.
	ErrNotFound = errs.New(prefix, "not found")
	// ErrPermissionDenied: the credentials may not read or write there.
	ErrPermissionDenied = errs.New(prefix, "permission denied")
	// ErrChanged: a conditional write found the object changed since it
	// was read (another writer), or another writer at work.
	ErrChanged = errs.New(prefix, "changed by another writer")
	// ErrStore: any other failure of the store.
	ErrStore = errs.New(prefix, "store failed")
)

// Error is a store's failure: its kind, what went wrong (naming the
// location or object), the fix, and the cause.
type Error struct {
	// Kind is one of the sentinels above.
	Kind error
	// What says what went wrong, naming the location or object.
	What string
	// Fix says how to put it right, in the words of the cloud's own
	// command-line tool or in plain words; empty when What says it all.
	// The location is called "the location".
	Fix string
	// Err is the cause, summed up in a few words, wrapping the SDK's
	// error.
	Err error
}

// Error returns "publish: " with what went wrong and the cause; the fix is
// the caller's to print.
func (e *Error) Error() string { return errs.Msg(prefix, e.What, e.Err) }

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// PartialError is a publication stopped after some objects were written:
// the discovery document, written last, was not, so readers still get the
// previous one. It matches the kind of the write that failed.
type PartialError struct {
	// Written and Left are the names of the objects written and of those
	// not written, in order.
	Written, Left []string
	// Err is the failed write's *Error.
	Err error
}

// Error names what was written and the failure.
func (e *PartialError) Error() string {
	return errs.Msg(prefix, "publication stopped after "+strconv.Itoa(len(e.Written))+" of "+strconv.Itoa(len(e.Written)+len(e.Left))+" objects", e.Err)
}

// Unwrap returns the failed write's error.
func (e *PartialError) Unwrap() error { return e.Err }

// storeError returns err as an *Error of its own kind, or of kind ErrStore
// with what, for a store that returned another error.
func storeError(err error, what string) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Kind: ErrStore, What: what, Err: err}
}

func quote(s string) string { return strconv.Quote(s) }

func itoa(n int) string { return strconv.Itoa(n) }
