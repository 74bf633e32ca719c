//go:build unix

package privdir

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedBySelf reports whether the process's effective user owns fi.
func ownedBySelf(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
