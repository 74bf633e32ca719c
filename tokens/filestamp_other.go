//go:build !unix

package tokens

import "os"

func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}
}
