package keystoretest

import (
	"errors"
	"os"
	"testing"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/skipmark"
)

// prefix starts the messages of the package's errors.
const prefix = "keystoretest"

// ErrNotInstalled matches a key store program that is not installed; the
// message says how to install it.
var ErrNotInstalled = errs.New(prefix, "not installed")

// notInstalledError is a key store program that is not installed: it
// matches [ErrNotInstalled], and mark is the line a test skips with, which
// the runner of README.md's test command counts.
type notInstalledError struct {
	err  error
	mark skipmark.Skip
}

// notInstalled returns the error of a program that is not installed:
// what mark names, said as msg.
func notInstalled(mark skipmark.Skip, msg string) error {
	return &notInstalledError{err: errs.Wrap(prefix, ErrNotInstalled, msg, nil), mark: mark}
}

func (e *notInstalledError) Error() string { return e.err.Error() }
func (e *notInstalledError) Unwrap() error { return e.err }

// missing skips the test for a program that is not installed, its first
// line the program's mark (SoftHSM2: skipped (softhsm2-util not found);
// install it with ...), or fails it under CI=1; any other error fails it.
func missing(t testing.TB, err error) {
	t.Helper()
	var ni *notInstalledError
	if errors.As(err, &ni) && os.Getenv("CI") == "" {
		t.Skip(ni.mark.String() + "\n" + err.Error())
	}
	t.Fatal(err)
}
