// Package unixsock listens on Unix socket files: a socket file left by a
// listener that is gone is replaced, a path in use by a live listener or
// holding anything but a socket is refused, and the socket gets the
// permission asked for. The external signer's socket and the SPIFFE
// Workload API's share it. It holds no state.
package unixsock

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// Errors of [Listen] about what is at the path.
var (
	// ErrNotSocket: the path holds something other than a socket.
	ErrNotSocket = errors.New("exists and is not a socket")
	// ErrInUse: a live listener answers on the path. It wraps
	// syscall.EADDRINUSE.
	ErrInUse = fmt.Errorf("is in use by a live listener (%w)", syscall.EADDRINUSE)
)

// Listen listens on the socket file path with permission mode: a stale
// socket file there is removed first; anything else there is refused
// (ErrNotSocket, ErrInUse). Other errors are the system's. Closing the
// listener removes the socket file.
func Listen(path string, mode fs.FileMode) (net.Listener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// removeStale removes a socket file nothing listens on any more.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return ErrNotSocket
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return ErrInUse
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
