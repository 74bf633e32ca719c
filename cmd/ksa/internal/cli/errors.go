package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Error is what a command reports when it fails: what went wrong, the
// cause, and what to do about it. It prints on one line.
type Error struct {
	// What says what went wrong, naming the file, URL or value at fault.
	What string
	// Err is the cause, if any.
	Err error
	// Fix says how to put it right; empty when What says it all.
	Fix string
	// Usage marks a usage error (exit status 2).
	Usage bool
}

func (e *Error) Error() string {
	msg := errs.Msg("", e.What, e.Err)
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return oneLine(msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// fail returns a failure (exit status 1).
func fail(cause error, fix, format string, args ...any) *Error {
	return &Error{What: fmt.Sprintf(format, args...), Err: cause, Fix: fix}
}

// usage returns a usage error (exit status 2).
func usage(fix, format string, args ...any) *Error {
	return &Error{What: fmt.Sprintf(format, args...), Fix: fix, Usage: true}
}

// exitCode maps an error returned by the command tree to an exit status:
// a failure is 1, anything cobra itself refused (flags, arguments, unknown
// commands) is a usage error.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var e *Error
	if errors.As(err, &e) && !e.Usage {
		return exitFailure
	}
	return exitUsage
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
