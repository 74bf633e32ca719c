// Package privdir makes private directories inside directories that
// others may write (a volume shared by a pod's containers), and holds
// them by descriptor: whatever another writer of the parent does to the
// name meanwhile (renames the directory, puts a symbolic link or a
// directory of its own in its place), the directory returned is the one
// made, of this process's user, open to nobody else. The credential
// folder's writer (internal/atomicdir) builds each write in one; socket
// files (internal/unixsock) are bound in one. It holds no state.
package privdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Mode is the permission of a directory Make creates, before the umask
// (which can only narrow it).
const Mode fs.FileMode = 0o700

// attempts bounds the names Make tries when one is taken.
const attempts = 16

// ErrReplaced: the directory made was replaced by another before it was
// opened (a link, or a directory of another user or open to others).
var ErrReplaced = errors.New("was replaced by another writer before it was opened")

// Make creates a directory in parent named prefix and a random suffix,
// with mode Mode, and opens it: dir is that directory, checked to be a
// directory of this process's effective user with no permission for group
// or others (ErrReplaced otherwise); name is its name in parent. The
// caller closes dir and removes name when done.
func Make(parent *os.Root, prefix string) (dir *os.Root, name string, err error) {
	for range attempts {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", err
		}
		name = prefix + hex.EncodeToString(b[:])
		err = parent.Mkdir(name, Mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if dir, err = open(parent, name); err != nil {
			return nil, "", err
		}
		return dir, name, nil
	}
	return nil, "", fmt.Errorf("no free name %s* after %d attempts: %w", prefix, attempts, fs.ErrExist)
}

// open opens the directory name of parent and checks it is private.
func open(parent *os.Root, name string) (*os.Root, error) {
	dir, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	fi, err := dir.Stat(".")
	if err == nil && (!fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedBySelf(fi)) {
		err = fmt.Errorf("%s %w", name, ErrReplaced)
	}
	if err != nil {
		dir.Close()
		return nil, err
	}
	return dir, nil
}
