package cli

import (
	"errors"
	"fmt"
	"strings"
)

// bugFix is the fix of a failure the command cannot explain (encoding its
// own output, a library refusing what the command built).
const bugFix = "this is a bug in ksa: report it, with the command you ran, at https://github.com/ksa-go/ksa/issues"

// flagFix is the fix of a flag whose value a rule refused, the rule said
// in the problem: it names the flag and where its rules are, never "fix
// --flag", which only repeats the problem.
func flagFix(flag, help string) string {
	return "give " + flag + " a value that passes the check above (see '" + help + " --help')"
}

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
	msg := e.What
	if c := libText(e.Err); c != "" {
		msg += ": " + c
	}
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

// libText returns an error's message without the leading package prefix of
// the ksa library ("jwks: ", "podcert: "), for quoting it after the
// command's own words: the prefix names a Go package, not anything the user
// typed. A nil err gives "".
func libText(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if pkg, rest, ok := strings.Cut(msg, ": "); ok && isLibPackage(pkg) {
		return rest
	}
	return msg
}

// isLibPackage reports whether name is a package of the ksa library
// whose errors start with "<name>: ".
func isLibPackage(name string) bool {
	switch name {
	case "ksa", "jwks", "tokens", "oidc", "oidctest", "x509sa", "credspec", "federation", "entratest",
		"kubeapi", "extsigner", "signertest", "podcert", "podcerttest", "workloadapi", "golangjwt", "jwxkeys", "ksaprom", "tokenreview", "publish",
		"podcertctl", "rotation", "credprovider", "tokenexchange":
		return true
	}
	return false
}
