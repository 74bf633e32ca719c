package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTryLockFile: a second holder, in the same process, is refused
// while the first holds the lock, reads its note, and gets the lock once
// it is released; the note goes with the lock, the file stays.
func TestTryLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.yaml.lock")
	first, err := TryLockFile(path, 0o644)
	require.NoError(t, err)
	require.NoError(t, first.Note("pid 1 on host a"))

	_, err = TryLockFile(path, 0o644)
	require.ErrorIs(t, err, ErrLocked)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, path, pe.Path)
	assert.Equal(t, "pid 1 on host a", ReadNote(path))

	require.NoError(t, first.Unlock())
	assert.Empty(t, ReadNote(path))
	second, err := TryLockFile(path, 0o644)
	require.NoError(t, err)
	require.NoError(t, second.Unlock())
	assert.FileExists(t, path)
}

// TestLockSurvivesRename: a lock file's lock guards nothing a rename
// replaces, which is why the lock is beside the file, not on it.
func TestLockSurvivesRename(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ring.yaml.lock")
	l, err := TryLockFile(lockPath, 0o644)
	require.NoError(t, err)
	defer l.Unlock()
	// The guarded file is replaced by a rename: the lock file is not.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp"), []byte("new"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(dir, "tmp"), filepath.Join(dir, "ring.yaml")))
	_, err = TryLockFile(lockPath, 0o644)
	assert.ErrorIs(t, err, ErrLocked)
}

func TestTryLockDir(t *testing.T) {
	dir := t.TempDir()
	l, err := TryLockDir(dir)
	require.NoError(t, err)
	_, err = TryLockDir(dir)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Unlock())
	l, err = TryLockDir(dir)
	require.NoError(t, err)
	require.NoError(t, l.Unlock())

	_, err = TryLockDir(filepath.Join(dir, "missing"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.Empty(t, ReadNote(filepath.Join(dir, "missing")))
}
