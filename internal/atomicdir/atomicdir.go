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
//
// The directory may be shared with writers the writer does not trust (a
// pod's emptyDir, which every container of the pod may write): every
// step works on directory descriptors, never on a path inside dir, so a
// link another writer puts at any name of the layout (dir itself
// included) is never followed out of it; the files are written into a
// directory private to this user (0700, checked ours, held by
// descriptor) and given their modes there, and only then is that
// directory opened to readers and swapped in.
package atomicdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ksa-go/ksa/internal/privdir"
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

// Write replaces the files of dir with files, as the package
// documentation describes; dirMode is the permission of the new hidden
// directory. dir is created, with dirMode, when it does not exist (its
// parent must); dir itself must not be a symbolic link. A name of a
// previous write that is not in files is removed; a name that exists in
// dir as anything but this layout's link is refused before anything is
// written. On error the previous files stay in place (a new hidden
// directory may be left, and is removed by the next write).
func Write(dir string, dirMode fs.FileMode, files map[string]File) error {
	return write(dir, dirMode, files, nil)
}

// write is Write; step, when set, is called at each step with its name
// (tests change the directory then, as another writer would).
func write(dir string, dirMode fs.FileMode, files map[string]File, step func(string)) error {
	if step == nil {
		step = func(string) {}
	}
	for name := range files {
		if err := CheckName(name); err != nil {
			return err
		}
	}
	root, err := openDir(dir, dirMode)
	if err != nil {
		return err
	}
	defer root.Close()
	for name := range files {
		if err := checkLink(root, dir, name); err != nil {
			return err
		}
	}
	step("opened")
	payload, name, err := privdir.Make(root, payloadPrefix)
	if err != nil {
		return err
	}
	defer payload.Close()
	step("payload")
	for fname, f := range files {
		if err := writeFile(payload, fname, f); err != nil {
			return err
		}
	}
	if err := chmodDir(payload, dirMode); err != nil {
		return err
	}
	step("written")
	if err := root.Remove(tmpLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := root.Symlink(name, tmpLink); err != nil {
		return err
	}
	step("linked")
	if err := root.Rename(tmpLink, DataLink); err != nil {
		return err
	}
	step("swapped")
	for fname := range files {
		if _, err := root.Lstat(fname); errors.Is(err, fs.ErrNotExist) {
			if err := root.Symlink(filepath.Join(DataLink, fname), fname); err != nil {
				return err
			}
		}
	}
	step("named")
	return clean(root, dir, name, files)
}

// openDir opens dir, creating it with mode when it does not exist: the
// directory opened is the one a link-free look at dir found (a link
// another writer put there is refused, not followed).
func openDir(dir string, mode fs.FileMode) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.Mkdir(dir, privdir.Mode); err == nil || errors.Is(err, fs.ErrExist) {
			created = err == nil
			fi, err = os.Lstat(dir)
		}
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (%s)", dir, kind(fi.Mode()))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if opened, err := root.Stat("."); err != nil || !os.SameFile(fi, opened) {
		root.Close()
		return nil, fmt.Errorf("%s was replaced while it was opened", dir)
	}
	if created {
		if err := chmodDir(root, mode); err != nil {
			root.Close()
			return nil, err
		}
	}
	return root, nil
}

// kind names a file type in messages.
func kind(m fs.FileMode) string {
	switch m.Type() {
	case fs.ModeSymlink:
		return "a symbolic link"
	case 0:
		return "a file"
	}
	return "a " + m.Type().String() + " file"
}

// chmodDir sets the permission of the directory root holds, through its
// descriptor.
func chmodDir(root *os.Root, mode fs.FileMode) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	err = d.Chmod(mode)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkLink refuses a name that exists in dir (held by root) as anything
// but a link into DataLink.
func checkLink(root *os.Root, dir, name string) error {
	target, err := root.Readlink(name)
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

// writeFile writes a new file of dir with its mode, whatever the umask.
func writeFile(dir *os.Root, name string, f File) error {
	out, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode)
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
// names no longer written, in dir (held by root).
func clean(root *os.Root, dir, current string, files map[string]File) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, payloadPrefix) && name != current:
			errs = append(errs, root.RemoveAll(name))
		case e.Type() == fs.ModeSymlink && !strings.HasPrefix(name, "."):
			if _, ok := files[name]; ok {
				continue
			}
			if target, err := root.Readlink(name); err == nil && target == filepath.Join(DataLink, name) {
				errs = append(errs, root.Remove(name))
			}
		}
	}
	return errors.Join(errs...)
}
