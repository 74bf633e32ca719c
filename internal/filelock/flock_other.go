//go:build !unix

package filelock

import (
	"errors"
	"os"
	"runtime"
)

// noFlock is the failure of every lock where flock(2) is missing.
type noFlock struct{}

func (noFlock) Error() string        { return "no file locks (flock) on " + runtime.GOOS }
func (noFlock) Is(target error) bool { return target == errors.ErrUnsupported }

func lockNB(*os.File) error { return noFlock{} }

func unlock(*os.File) error { return noFlock{} }
