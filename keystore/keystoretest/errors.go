package keystoretest

import (
	"errors"
	"os"
	"testing"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "keystoretest"

// ErrNotInstalled matches a key store program that is not installed; the
// message says how to install it.
var ErrNotInstalled = errs.New(prefix, "not installed")

// missing skips the test for a program that is not installed, or fails it
// under CI=1; any other error fails it.
func missing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err.Error())
	}
	t.Fatal(err)
}
