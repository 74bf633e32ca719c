//go:build unix

package unixsock

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListenNeverWider: under umask 0 a socket is bound 0777; the path
// must never show it so. At the moment of the bind, the path does not
// exist yet (or is already the socket with its mode), the socket sits in
// a directory of mode 0700, and nothing else is in the parent; after
// Listen, the path is the socket with its mode and the directory is gone.
func TestListenNeverWider(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	parent := t.TempDir()
	path := filepath.Join(parent, "api.sock")
	var seen int
	l, err := listen(path, 0o600, func(tmp string) {
		seen++
		fi, err := os.Lstat(path)
		if err == nil {
			assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "the path is never wider than its mode")
		} else {
			assert.ErrorIs(t, err, fs.ErrNotExist)
		}
		dir := filepath.Dir(tmp)
		assert.Equal(t, parent, filepath.Dir(dir), "bound beside the path")
		di, err := os.Lstat(dir)
		require.NoError(t, err)
		assert.True(t, di.IsDir())
		assert.Equal(t, fs.FileMode(0o700), di.Mode().Perm(), "the socket is bound where nobody else can reach it")
		assert.True(t, strings.HasPrefix(filepath.Base(dir), tmpPrefix))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, seen)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSocket, fi.Mode().Type())
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, path, l.Addr().String(), "the address is the path")
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the private directory is removed")
	assert.Equal(t, "api.sock", entries[0].Name())
	require.NoError(t, l.Close())
	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "closing removes the socket file")
}

// TestListenNeverReplaces: what appears at the path while Listen binds
// (a file, a live listener) is refused, never replaced, and the private
// directory is removed all the same.
func TestListenNeverReplaces(t *testing.T) {
	parent := t.TempDir()
	path := filepath.Join(parent, "api.sock")
	_, err := listen(path, 0o600, func(string) {
		require.NoError(t, os.WriteFile(path, []byte("mine"), 0o600))
	})
	require.ErrorIs(t, err, ErrNotSocket)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
	require.NoError(t, os.Remove(path))

	var live *listener
	_, err = listen(path, 0o600, func(string) {
		l, err := Listen(path, 0o600)
		require.NoError(t, err)
		live = l.(*listener)
	})
	require.ErrorIs(t, err, ErrInUse)
	require.NotNil(t, live)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(fi, live.file), "the live listener keeps its path")
	require.NoError(t, live.Close())
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
