package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile writes data to name atomically: to a temporary file in the same
// directory, then renamed (or, with noClobber, hard-linked so that an
// existing file is never replaced). A reader never sees half a file and a
// failure leaves nothing behind.
func writeFile(name string, data []byte, perm fs.FileMode, noClobber bool) error {
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

// errTooLarge marks an input over its size limit.
var errTooLarge = errors.New("over the size limit")

// readInput reads a file, or standard input for "-" or "", refusing more
// than limit bytes.
func readInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	if name == "" || name == "-" {
		if r == nil {
			return nil, errors.New("standard input is not available here")
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// inputName names an input in messages.
func inputName(name string) string {
	if name == "" || name == "-" {
		return "standard input"
	}
	return name
}
