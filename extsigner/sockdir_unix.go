//go:build unix

package extsigner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// checkSocketDir refuses a socket file at path whose directory another
// user could write, or whose directories above could be renamed or
// replaced by another user: that user could bind the name while the
// signer is not listening. The directory and those above it must be owned
// by root or the process's effective user; the directory must not be
// writable by its group or others, one above it not without the sticky
// bit. Symbolic links are followed. A directory that does not exist is
// left to the listen call to report.
func checkSocketDir(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return errs.Wrap(prefix, nil, "", err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap(prefix, nil, "", err)
	}
	self := uint32(os.Geteuid())
	for d, above := dir, false; ; d, above = filepath.Dir(d), true {
		fi, err := os.Stat(d)
		if err != nil {
			return errs.Wrap(prefix, nil, "", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if problem := dirProblem(uint32(st.Uid), uint32(st.Mode)&0o7777, self, above); problem != "" {
			return &ksa.ConfigError{Field: "extsigner.ListenConfig.Address",
				Reason: "is in a directory another user can change, who could then bind the socket's name before the signer: use one only root or this process's user can write (such as /run/ksa-signer, owned by root, mode 0700), or set InsecureSharedDirectory",
				Err:    errs.Wrap(prefix, ErrSharedSocketDirectory, "directory "+d+" "+problem, nil)}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// dirProblem says what makes a directory unsafe for a socket file (owner
// uid, permission bits mode; above: a directory above the socket's), or
// "" when nothing does.
func dirProblem(uid, mode, self uint32, above bool) string {
	const sticky, othersWrite = 0o1000, 0o022
	switch {
	case uid != 0 && uid != self:
		return fmt.Sprintf("is owned by uid %d, neither root nor this process's user (uid %d)", uid, self)
	case mode&othersWrite == 0:
		return ""
	case !above:
		return fmt.Sprintf("is writable by other users (mode %04o)", mode)
	case mode&sticky == 0:
		return fmt.Sprintf("is writable by other users without the sticky bit (mode %04o)", mode)
	}
	return ""
}
