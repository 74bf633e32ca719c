// Package filelock holds the advisory locks of file-backed stores (a
// ring file, a directory a site is published to): an exclusive
// flock(2) on a file or a directory, taken without waiting, so that two
// runs that must not overlap find out at once and say so.
//
// A lock belongs to an open file, not to a name: a file replaced by a
// rename (as atomicfile writes) is a new file that nobody has locked. So
// a lock is taken on a name nothing replaces: a lock file beside the file
// it guards (never removed, since a run that removed it would let the
// next two runs lock two different files), or a directory. Two opens in
// one process are two holders, as two processes are.
//
// The lock is advisory: only writers that take it are kept out. On a
// network file system it is as good as the server's locks (NFSv4 gives
// flock the server's byte-range locks). Systems without flock(2)
// (Windows, Plan 9) fail with an error matching errors.ErrUnsupported.
package filelock

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ErrLocked is the failure of a lock another holder has.
var ErrLocked = errors.New("locked by another run")

// Lock is a lock held.
type Lock struct {
	f *os.File
}

// TryLockFile opens the lock file path, making it (mode perm) when
// missing, and takes its exclusive lock without waiting: a lock another
// holder has is an error matching ErrLocked.
func TryLockFile(path string, perm fs.FileMode) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	return tryLock(f)
}

// TryLockDir takes the exclusive lock of the directory dir without
// waiting: a lock another holder has is an error matching ErrLocked.
func TryLockDir(dir string) (*Lock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return tryLock(f)
}

func tryLock(f *os.File) (*Lock, error) {
	if err := lockNB(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	return &Lock{f: f}, nil
}

// Note replaces the lock file's contents with note (who holds the lock,
// for the runs it keeps out to say).
func (l *Lock) Note(note string) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(note), 0)
	return err
}

// Unlock empties the lock file of its note (a directory has none),
// releases the lock and closes the file.
func (l *Lock) Unlock() error {
	var errTrunc error
	if fi, err := l.f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		errTrunc = l.f.Truncate(0)
	}
	errUnlock := unlock(l.f)
	return errors.Join(errTrunc, errUnlock, l.f.Close())
}

// MaxNoteBytes bounds the note ReadNote returns.
const MaxNoteBytes = 512

// ReadNote returns the note of a lock file's holder: at most
// MaxNoteBytes, "" when there is none or it cannot be read.
func ReadNote(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, MaxNoteBytes))
	return string(b)
}
