package unixsock_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/unixsock"
)

func TestListen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "api.sock")

	l, err := unixsock.Listen(path, 0o640)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())

	_, err = unixsock.Listen(path, 0o600)
	require.ErrorIs(t, err, unixsock.ErrInUse, "a live listener keeps its path")
	require.ErrorIs(t, err, syscall.EADDRINUSE)

	// A socket file left behind by a listener that is gone is replaced.
	require.NoError(t, l.Close())
	stale, err := net.Listen("unix", path)
	require.NoError(t, err)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, stale.Close())
	l, err = unixsock.Listen(path, 0o600)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "closing removes the socket file")

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = unixsock.Listen(file, 0o600)
	require.ErrorIs(t, err, unixsock.ErrNotSocket)
}
