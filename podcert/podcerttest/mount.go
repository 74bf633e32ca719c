package podcerttest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ksa-go/ksa/internal/atomicdir"
	"github.com/ksa-go/ksa/internal/errs"
)

// Mount is a directory written as the kubelet writes a projected volume:
// every [Mount.Write] puts its files into a new hidden directory, then
// swaps the ..data link to it with a rename, so that a reader opening
// Path(name) reads a whole file of one write, never a partial one. Names
// of an earlier write that a later one leaves out are removed. One writer
// at a time.
type Mount struct {
	dir string
}

// NewMount returns a Mount of dir, which must be a directory.
func NewMount(dir string) (*Mount, error) {
	st, err := os.Stat(dir)
	var pathErr *os.PathError
	switch {
	case errors.As(err, &pathErr):
		err = pathErr.Err
	case err == nil && !st.IsDir():
		err = errNotDir
	}
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "mount "+dir, err)
	}
	return &Mount{dir: dir}, nil
}

var errNotDir = errors.New("not a directory")

// Dir returns the mount's directory.
func (m *Mount) Dir() string { return m.dir }

// Path returns the path a program reads the file name at.
func (m *Mount) Path(name string) string { return filepath.Join(m.dir, name) }

// FileMode is the permission of the files a Mount writes.
const FileMode fs.FileMode = 0o600

// Write replaces the mount's files with files (by name: plain file names,
// not starting with a dot) in one atomic step.
func (m *Mount) Write(files map[string][]byte) error {
	out := make(map[string]atomicdir.File, len(files))
	for name, data := range files {
		out[name] = atomicdir.File{Data: data, Mode: FileMode}
	}
	if err := atomicdir.Write(m.dir, 0o755, out); err != nil {
		return errs.Wrap(prefix, nil, "writing "+m.dir, err)
	}
	return nil
}
