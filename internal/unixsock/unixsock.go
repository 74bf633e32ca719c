// Package unixsock listens on Unix socket files: a socket file left by a
// listener that is gone is replaced, a path in use by a live listener or
// holding anything but a socket is refused, and the socket file is never
// more open than the permission asked for, whatever the umask: it is bound
// in a private directory beside the path, given its permission there, and
// only then linked into place. The external signer's socket and the
// SPIFFE Workload API's share it. It holds no state.
package unixsock

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ksa-go/ksa/internal/privdir"
)

// Errors of [Listen] about what is at the path.
var (
	// ErrNotSocket: the path holds something other than a socket.
	ErrNotSocket = errors.New("exists and is not a socket")
	// ErrInUse: a live listener answers on the path. It wraps
	// syscall.EADDRINUSE.
	ErrInUse = fmt.Errorf("is in use by a live listener (%w)", syscall.EADDRINUSE)
)

// Names of the private directory the socket is bound in.
const (
	// tmpPrefix starts the directory's name, beside the path.
	tmpPrefix = ".sock-"
	// tmpSocket is the socket's name in it.
	tmpSocket = "s"
)

// Listen listens on the socket file path with permission mode. A stale
// socket file there is removed first; anything else there is refused
// (ErrNotSocket, ErrInUse), also when it appears while Listen works: the
// socket is linked into place, never renamed over what is there. The
// socket is bound in a new private directory beside path (mode 0700, of
// this user, held by descriptor), given mode there, then linked at path,
// and the directory removed: no moment exists when path, or any name
// another user can reach, is a socket more open than mode. The name bound
// is the directory of path, "/.sock-" and 16 hex digits, "/s": it must fit
// a socket address (107 bytes on Linux, 103 on macOS). A directory left
// by a process killed meanwhile is not reused. Other errors are the
// system's. Closing the listener removes the socket file, if path
// is still this listener's.
func Listen(path string, mode fs.FileMode) (net.Listener, error) {
	l, err := listen(path, mode, nil)
	if err != nil {
		return nil, sysError(path, err)
	}
	return l, nil
}

// sysError reports a system error of Listen as the net package reports
// its own: a *net.OpError of the path.
func sysError(path string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, ErrNotSocket) || errors.Is(err, ErrInUse) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = os.NewSyscallError(pe.Op, pe.Err)
	}
	return &net.OpError{Op: "listen", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: err}
}

// listen is Listen; bound, when set, is called once the socket is bound
// in the private directory, with the name it is bound at (tests look at
// the path then).
func listen(path string, mode fs.FileMode, bound func(tmp string)) (net.Listener, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	parentPath := filepath.Dir(path)
	parent, err := os.OpenRoot(parentPath)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	dir, name, err := privdir.Make(parent, tmpPrefix)
	if err != nil {
		return nil, err
	}
	defer func() {
		dir.Remove(tmpSocket)
		dir.Close()
		parent.Remove(name)
	}()
	tmp := filepath.Join(parentPath, name, tmpSocket)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false)
	if bound != nil {
		bound(tmp)
	}
	// The socket is in the directory held, which nobody else can write:
	// the bind did not go through a name another writer replaced.
	fi, err := dir.Lstat(tmpSocket)
	if err == nil && fi.Mode().Type() != fs.ModeSocket {
		err = fmt.Errorf("%s is not the socket bound", tmp)
	}
	if err == nil {
		err = dir.Chmod(tmpSocket, mode)
	}
	if err == nil {
		err = link(tmp, path)
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return &listener{UnixListener: l, path: path, file: fi}, nil
}

// link links the socket file tmp at path, without replacing what is
// there: a stale socket that appeared meanwhile is removed and the link
// tried once more; anything else is refused as Listen refuses it.
func link(tmp, path string) error {
	for range 2 {
		err := os.Link(tmp, path)
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := removeStale(path); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: %w", path, fs.ErrExist)
}

// listener is a socket linked at path: Addr names path, and Close removes
// path if it still is this socket.
type listener struct {
	*net.UnixListener
	path string
	// file is the socket file, to tell it from one another listener put
	// at path since.
	file fs.FileInfo
}

// Addr returns the address clients dial: the path.
func (l *listener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

// Close stops listening and removes the socket file.
func (l *listener) Close() error {
	err := l.UnixListener.Close()
	if fi, lerr := os.Lstat(l.path); lerr == nil && os.SameFile(fi, l.file) {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
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
