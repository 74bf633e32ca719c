package publish

import (
	"errors"
	"strconv"
	"strings"
)

// The kinds of failure, matched with errors.Is.
var (
	// ErrLocation: the location does not name a store ksa writes to.
	ErrLocation = errors.New("bad location")
	// ErrNoCredentials: the cloud's default chain found no credentials,
	// or they were refused as credentials (expired, malformed).
	ErrNoCredentials = errors.New("no credentials")
	// ErrNotFound: the bucket, container or object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrPermissionDenied: the credentials may not read or write there.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrNotPublic: the cloud does not serve the location to anonymous
	// readers, as relying parties read it.
	ErrNotPublic = errors.New("not publicly readable")
	// ErrNotBuilt: this ksa was built without the store's SDK.
	ErrNotBuilt = errors.New("store not built in")
	// ErrChanged: a conditional write found the object changed since it
	// was read (another writer), or another writer at work.
	ErrChanged = errors.New("changed by another writer")
	// ErrStore: any other failure of the store.
	ErrStore = errors.New("store failed")
)

// Error is a store's failure: its kind, what went wrong (naming the
// location), the fix, and the cause.
type Error struct {
	// Kind is one of the Err sentinels.
	Kind error
	// What says what went wrong, naming the location or object.
	What string
	// Fix says how to put it right, in the words of the cloud's own
	// command-line tool; empty when What says it all.
	Fix string
	// Err is the cause, summed up in a few words, wrapping the SDK's
	// error.
	Err error
}

// Error returns what went wrong and the cause; the fix is the caller's to
// print.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.What
	}
	return e.What + ": " + e.Err.Error()
}

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// cause is an SDK error summed up in a few words (the SDKs print whole
// responses), still wrapping the SDK's error.
type cause struct {
	msg string
	err error
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.err }

// summed wraps err with a short message.
func summed(msg string, err error) error {
	if err == nil {
		return nil
	}
	return &cause{msg: msg, err: err}
}

func quote(s string) string { return strconv.Quote(s) }

// firstLine returns the first line of a message (the SDKs' run to pages).
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// notBuilt is the failure of a location whose store this build left out
// with tag.
func notBuilt(loc Location, tag string) error {
	return &Error{Kind: ErrNotBuilt, What: "this ksa was built without " + string(loc.Kind) + " support (-tags " + tag + ")",
		Fix: "use a ksa built without -tags " + tag}
}
