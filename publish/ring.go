package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/atomicfile"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/filelock"
)

// RingStore holds the ring file a [Rotation] rewrites, and every signer
// reads: a file on a volume the signers share ([FileRing]), a Secret or a
// ConfigMap a controller updates. Implementations are safe for
// concurrent use.
type RingStore interface {
	// Read returns the ring file and the Version read.
	Read(ctx context.Context) (*extsigner.RingFile, Version, error)
	// Write replaces the ring file with f, only if the store still holds
	// version v of it (compare and swap, as a Kubernetes update on a
	// resourceVersion): otherwise the failure matches ErrChanged, and
	// nothing is written.
	Write(ctx context.Context, f *extsigner.RingFile, v Version) error
}

// FileRingConfig says how a [FileRing] reads and writes its file. The zero
// value reads and writes JSON.
type FileRingConfig struct {
	// Parse reads the file's bytes; nil means extsigner.ParseRingFile.
	Parse func([]byte) (*extsigner.RingFile, error)
	// Format writes f in the format of like, the bytes it replaces (a
	// YAML file stays YAML); nil means f.AppendJSON.
	Format func(f *extsigner.RingFile, like []byte) ([]byte, error)
}

// FileRing is a ring file on disk. It is written in place, atomically (a
// temporary file renamed over it, through a symbolic link to its target,
// keeping its mode), only while its bytes are those read; a writer that
// must not overlap another holds [FileRing.Lock] from read to write.
type FileRing struct {
	path string
	cfg  FileRingConfig
}

// NewFileRing returns the ring file at path.
func NewFileRing(path string, cfg FileRingConfig) *FileRing {
	return &FileRing{path: path, cfg: cfg}
}

// Path returns the ring file's path.
func (r *FileRing) Path() string { return r.path }

// Read reads the ring file (at most extsigner.MaxRingFileBytes); its
// version is the SHA-256 of its bytes. A file that cannot be read is an
// *Error (ErrNotFound, ErrPermissionDenied, ErrStore); one that does not
// parse, Parse's error.
func (r *FileRing) Read(context.Context) (*extsigner.RingFile, Version, error) {
	data, err := r.bytes()
	if err != nil {
		return nil, "", err
	}
	parse := r.cfg.Parse
	if parse == nil {
		parse = extsigner.ParseRingFile
	}
	f, err := parse(data)
	if err != nil {
		return nil, "", err
	}
	return f, digest(data), nil
}

// bytes reads the file, bounded.
func (r *FileRing) bytes() ([]byte, error) {
	file, err := os.Open(r.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Kind: ErrNotFound, What: "ring file " + r.path + " does not exist", Err: err}
	case errors.Is(err, fs.ErrPermission):
		return nil, &Error{Kind: ErrPermissionDenied, What: "ring file " + r.path + " is not readable", Err: err}
	case err != nil:
		return nil, &Error{Kind: ErrStore, What: "reading ring file " + r.path, Err: err}
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, extsigner.MaxRingFileBytes+1))
	if err != nil {
		return nil, &Error{Kind: ErrStore, What: "reading ring file " + r.path, Err: err}
	}
	if len(data) > extsigner.MaxRingFileBytes {
		return nil, &Error{Kind: ErrStore, What: "ring file " + r.path + " is over the " + itoa(extsigner.MaxRingFileBytes) + "-byte limit"}
	}
	return data, nil
}

// Write replaces the file's target with f, formatted like the bytes it
// holds, once those are still version v; a file changed since is left as
// it is (ErrChanged).
func (r *FileRing) Write(_ context.Context, f *extsigner.RingFile, v Version) error {
	target, err := filepath.EvalSymlinks(r.path)
	if err != nil {
		return &Error{Kind: ErrStore, What: "resolving ring file " + r.path, Err: err}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return &Error{Kind: ErrStore, What: "checking ring file " + r.path, Err: err}
	}
	like, err := r.bytes()
	if err != nil || digest(like) != v {
		return &Error{Kind: ErrChanged, What: r.path + " changed since it was read: another writer wrote it", Err: err}
	}
	data := f.AppendJSON(nil)
	if r.cfg.Format != nil {
		if data, err = r.cfg.Format(f, like); err != nil {
			return &Error{Kind: ErrStore, What: "formatting ring file " + r.path, Err: err}
		}
	}
	if err := atomicfile.Write(target, data, fi.Mode().Perm(), false); err != nil {
		return &Error{Kind: ErrPermissionDenied, What: "writing " + target, Fix: "give a ring file this process may write (a ConfigMap's volume is read-only)", Err: err}
	}
	return nil
}

// LockSuffix names the lock file of a ring file, beside its target:
// FILE.lock.
const LockSuffix = ".lock"

// ErrLocked: another writer holds the lock.
var ErrLocked = errs.New(prefix, "locked by another writer")

// LockError is a lock that could not be taken. It matches ErrLocked when
// another writer holds it, and wraps the cause otherwise
// (errors.ErrUnsupported on a system without flock(2), fs.ErrPermission).
type LockError struct {
	// Path is the lock file; Holder the note its holder left, if any.
	Path, Holder string
	Err          error
}

// Error names the lock file and the holder.
func (e *LockError) Error() string {
	if errors.Is(e.Err, filelock.ErrLocked) {
		msg := "another writer holds the lock " + e.Path
		if e.Holder != "" {
			msg = "another writer (" + e.Holder + ") holds the lock " + e.Path
		}
		return errs.Msg(prefix, msg, nil)
	}
	return errs.Msg(prefix, "locking "+e.Path, e.Err)
}

// Is matches ErrLocked when another writer holds the lock.
func (e *LockError) Is(target error) bool {
	return target == ErrLocked && errors.Is(e.Err, filelock.ErrLocked)
}

// Unwrap returns the cause.
func (e *LockError) Unwrap() error { return e.Err }

// Lock takes the writers' lock of the ring file without waiting: an
// exclusive flock(2) of FILE.lock beside the file the path resolves to
// (the file itself is replaced by a rename, which a lock on it would not
// survive). note says who holds it, for the writers it keeps out (a
// [*LockError] with Holder). The lock file stays, empty between writers:
// one that removed it would let the next two lock two different files.
// The lock is advisory, and as good as the file system's.
func (r *FileRing) Lock(note string) (unlock func() error, err error) {
	target, err := filepath.EvalSymlinks(r.path)
	if err != nil {
		return nil, &Error{Kind: ErrNotFound, What: "ring file " + r.path + " does not exist", Err: err}
	}
	path := target + LockSuffix
	l, err := filelock.TryLockFile(path, 0o644)
	if err != nil {
		le := &LockError{Path: path, Err: err}
		if errors.Is(err, filelock.ErrLocked) {
			le.Holder = filelock.ReadNote(path)
		}
		return nil, le
	}
	_ = l.Note(note) // best effort: for the writers it keeps out
	return l.Unlock, nil
}

// digest is the version of a file's bytes.
func digest(data []byte) Version {
	sum := sha256.Sum256(data)
	return Version(hex.EncodeToString(sum[:]))
}
