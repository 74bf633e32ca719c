package publish

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/ksa-go/ksa/cmd/ksa/internal/atomicfile"
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
		return Preflight{}, &Error{Kind: ErrPermissionDenied, What: "directory " + d.loc.Path + " cannot be read", Fix: "choose a directory ksa may write", Err: err}
	case !fi.IsDir():
		return Preflight{}, &Error{Kind: ErrLocation, What: d.loc.Path + " is not a directory", Fix: "give --to a directory"}
	}
	return Preflight{}, nil
}

func (d *dirStore) Get(_ context.Context, name string, max int64) ([]byte, error) {
	p := d.loc.URL(name)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Kind: ErrNotFound, What: p + " does not exist"}
	}
	if err != nil {
		return nil, &Error{Kind: ErrPermissionDenied, What: "reading " + p, Fix: "choose a directory ksa may read", Err: err}
	}
	defer f.Close()
	return readObject(f, p, max, "remove the file, or publish elsewhere")
}

// Put writes the file atomically (a temporary file renamed over it),
// mode 0644: anyone may read it.
func (d *dirStore) Put(_ context.Context, o Object) error {
	p := d.loc.URL(o.Name)
	if err := atomicfile.Write(p, o.Data, 0o644, false); err != nil {
		return &Error{Kind: ErrPermissionDenied, What: "writing " + p, Fix: "choose a directory ksa may write", Err: err}
	}
	return nil
}
