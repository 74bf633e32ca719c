// Package atomicdir replaces the files of a directory all at once, as the
// kubelet's atomic writer does for projected volumes, so that a reader
// opening dir/NAME never sees a half-written file nor a file of another
// write than its neighbours:
//
//	# the layout
//	dir/..data            -> ..payload-123      (a symbolic link, swapped by a rename)
//	dir/..payload-123/    the files of the last write
//	dir/NAME              -> ..data/NAME        (one link per file)
//
// [Write] writes the new files into a new hidden directory, then renames
// a new link over ..data (one atomic step), links the new names, and
// removes the previous directory and the links of names no longer
// written. One writer at a time; readers need nothing but to open
// dir/NAME. The package runs no goroutine and holds no state.
package atomicdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Names of the layout.
const (
	// DataLink is the link to the directory of the last write.
	DataLink = "..data"
	// payloadPrefix starts the hidden directories of writes.
	payloadPrefix = "..payload-"
	// tmpLink is the link renamed over DataLink.
	tmpLink = "..data_tmp"
)

// File is one file of a write.
type File struct {
	Data []byte
	// Mode is the file's permission bits.
	Mode fs.FileMode
}

// CheckName reports whether name can be a file of a write: a plain file
// name, neither empty nor starting with "." (the layout's own names start
// with ".."), without a path separator.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("file name %q starts with a dot", name)
	case strings.ContainsAny(name, `/\`) || name != filepath.Base(name):
		return fmt.Errorf("file name %q is not a plain name", name)
	}
	return nil
}

// Write replaces the files of dir (which must exist) with files, as the
// package documentation describes; dirMode is the permission of the new
// hidden directory. A name of a previous write that is not in files is
// removed; a name that exists in dir as anything but this layout's link is
// refused before anything is written. On error the previous files stay
// in place (a new hidden directory may be left, and is removed by the
// next write).
func Write(dir string, dirMode fs.FileMode, files map[string]File) error {
	for name := range files {
		if err := CheckName(name); err != nil {
			return err
		}
		if err := checkLink(dir, name); err != nil {
			return err
		}
	}
	payload, err := os.MkdirTemp(dir, payloadPrefix)
	if err != nil {
		return err
	}
	if err := os.Chmod(payload, dirMode); err != nil {
		return err
	}
	for name, f := range files {
		if err := writeFile(filepath.Join(payload, name), f); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, tmpLink)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(filepath.Base(payload), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, DataLink)); err != nil {
		return err
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); errors.Is(err, fs.ErrNotExist) {
			if err := os.Symlink(filepath.Join(DataLink, name), link); err != nil {
				return err
			}
		}
	}
	return clean(dir, filepath.Base(payload), files)
}

// checkLink refuses a name that exists in dir as anything but a link into
// DataLink.
func checkLink(dir, name string) error {
	target, err := os.Readlink(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s exists and is not a link this writer made", filepath.Join(dir, name))
	case target != filepath.Join(DataLink, name):
		return fmt.Errorf("%s links to %s, not into %s", filepath.Join(dir, name), target, DataLink)
	}
	return nil
}

// writeFile writes a new file with its mode, whatever the umask.
func writeFile(path string, f File) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode)
	if err != nil {
		return err
	}
	_, err = out.Write(f.Data)
	if err == nil {
		err = out.Chmod(f.Mode)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// clean removes the hidden directories of earlier writes and the links of
// names no longer written.
func clean(dir, current string, files map[string]File) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, payloadPrefix) && name != current:
			errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
		case e.Type() == fs.ModeSymlink && !strings.HasPrefix(name, "."):
			if _, ok := files[name]; ok {
				continue
			}
			if target, err := os.Readlink(filepath.Join(dir, name)); err == nil && target == filepath.Join(DataLink, name) {
				errs = append(errs, os.Remove(filepath.Join(dir, name)))
			}
		}
	}
	return errors.Join(errs...)
}
