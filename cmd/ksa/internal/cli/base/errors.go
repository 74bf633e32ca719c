package base

import (
	"errors"
	"fmt"

	"github.com/ksa-go/ksa"
)

// BugFix is the fix of a failure the command cannot explain (encoding its
// own output, a library refusing what the command built).
const BugFix = "this is a bug in ksa: report it, with the command you ran, at https://github.com/ksa-go/ksa/issues"

// FlagFix is the fix of a flag whose value a rule refused, the rule said
// in the problem: it names the flag and where its rules are, never "fix
// --flag", which only repeats the problem.
func FlagFix(flag, help string) string {
	return "give " + flag + " a value that passes the check above (see '" + help + " --help')"
}

// Exit statuses.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
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
	msg := e.What
	if c := ksa.ErrorText(e.Err); c != "" {
		msg += ": " + c
	}
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return OneLine(msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Fail returns a failure (exit status 1).
func Fail(cause error, fix, format string, args ...any) *Error {
	return &Error{What: fmt.Sprintf(format, args...), Err: cause, Fix: fix}
}

// Usage returns a usage error (exit status 2).
func Usage(fix, format string, args ...any) *Error {
	return &Error{What: fmt.Sprintf(format, args...), Fix: fix, Usage: true}
}

// ExitCode maps an error returned by the command tree to an exit status:
// a failure is 1, anything cobra itself refused (flags, arguments, unknown
// commands) is a usage error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) && !e.Usage {
		return ExitFailure
	}
	return ExitUsage
}
