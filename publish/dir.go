package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/ksa-go/ksa/internal/atomicfile"
	"github.com/ksa-go/ksa/internal/filelock"
)

// dirStore publishes to a local directory (served by a web server of the
// operator's own).
type dirStore struct {
	loc Location
}

func (d *dirStore) Location() Location { return d.loc }

// PublicURL is unknown for a directory.
func (d *dirStore) PublicURL() string { return "" }

// Preflight checks that the directory exists, or can be made, and is a
// directory.
func (d *dirStore) Preflight(context.Context) (Preflight, error) {
	fi, err := os.Stat(d.loc.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Preflight{}, nil // made on the first write
	case err != nil:
		return Preflight{}, &Error{Kind: ErrPermissionDenied, What: "directory " + d.loc.Path + " cannot be read", Fix: "choose a directory this process may write", Err: err}
	case !fi.IsDir():
		return Preflight{}, &Error{Kind: ErrLocation, What: d.loc.Path + " is not a directory", Fix: "give the location a directory"}
	}
	return Preflight{}, nil
}

// Get reads the file; its version is the SHA-256 of its bytes.
func (d *dirStore) Get(_ context.Context, name string, max int64) ([]byte, Version, error) {
	p := d.loc.URL(name)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", &Error{Kind: ErrNotFound, What: p + " does not exist"}
	}
	if err != nil {
		return nil, "", &Error{Kind: ErrPermissionDenied, What: "reading " + p, Fix: "choose a directory this process may read", Err: err}
	}
	defer f.Close()
	data, err := ReadObject(f, p, max)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	return data, Version(hex.EncodeToString(sum[:])), nil
}

// Put writes the file atomically (a temporary file renamed over it),
// mode 0644: anyone may read it.
func (d *dirStore) Put(_ context.Context, o Object) error {
	return d.put(o, nil)
}

// PutIf writes the file as Put does, while no other writer of this
// package's writes the directory (the flock(2) of the location's
// directory, which Put takes too), once the file read back is still
// version v.
func (d *dirStore) PutIf(_ context.Context, o Object, v Version) error {
	return d.put(o, &v)
}

// put writes o holding the directory's lock, once the file is at version
// *v when v is not nil.
func (d *dirStore) put(o Object, v *Version) error {
	p := d.loc.URL(o.Name)
	if err := os.MkdirAll(d.loc.Path, 0o755); err != nil {
		return &Error{Kind: ErrPermissionDenied, What: "making directory " + d.loc.Path, Fix: "choose a directory this process may write", Err: err}
	}
	lock, err := filelock.TryLockDir(d.loc.Path)
	switch {
	case errors.Is(err, filelock.ErrLocked):
		return &Error{Kind: ErrChanged, What: "writing " + p + ": another writer writes to " + d.loc.Path + " now", Err: err}
	case err != nil:
		return &Error{Kind: ErrStore, What: "locking directory " + d.loc.Path, Fix: "publish to a directory on a local file system", Err: err}
	}
	defer lock.Unlock()
	if v != nil {
		now, err := fileVersion(p)
		if err != nil {
			return &Error{Kind: ErrPermissionDenied, What: "reading " + p, Fix: "choose a directory this process may read", Err: err}
		}
		if now != *v {
			return &Error{Kind: ErrChanged, What: "writing " + p + ": it changed since it was read"}
		}
	}
	if err := atomicfile.Write(p, o.Data, 0o644, false); err != nil {
		return &Error{Kind: ErrPermissionDenied, What: "writing " + p, Fix: "choose a directory this process may write", Err: err}
	}
	return nil
}

// fileVersion is the version of the file p: the SHA-256 of its bytes, ""
// when there is none.
func fileVersion(p string) (Version, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return Version(hex.EncodeToString(h.Sum(nil))), nil
}
