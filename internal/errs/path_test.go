package errs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/errs"
)

// TestPathCause: the cause of an *fs.PathError about the path, still
// matching what the error matched; any other error as it is.
func TestPathCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing")
	_, err := os.Open(path)
	cause := errs.PathCause(path, err)
	assert.NotContains(t, cause.Error(), path)
	assert.ErrorIs(t, cause, fs.ErrNotExist)

	assert.Equal(t, err, errs.PathCause("other", err), "another path")
	other := errors.New("x")
	assert.Equal(t, other, errs.PathCause(path, other))
}
