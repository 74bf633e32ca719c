//go:build unix

package tokens

import (
	"os"
	"syscall"
)

func stampOf(fi os.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino, st.dev = uint64(sys.Ino), uint64(sys.Dev) //nolint:unconvert // widths differ by platform
	}
	return st
}
