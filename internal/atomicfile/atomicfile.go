// Package atomicfile is the library's one way to write a file (the
// ksa command, a program over the public API, has its own): to a
// temporary file in the same directory, synced, then renamed over the name
// (or, with NoClobber, hard-linked, so that an existing file is never
// replaced). A reader never sees half a file and a failure leaves nothing
// behind.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to name with the mode perm, creating its directory
// (mode 0755) when missing. With noClobber, an existing name is left as it
// is and the error matches fs.ErrExist.
func Write(name string, data []byte, perm fs.FileMode, noClobber bool) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if noClobber {
		return os.Link(tmp.Name(), name)
	}
	return os.Rename(tmp.Name(), name)
}
