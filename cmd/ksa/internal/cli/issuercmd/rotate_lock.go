package issuercmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/publish"
)

// lockRing takes the lock of a scheduled rotation of the ring file path,
// for the whole run: an exclusive flock(2) of FILE.lock beside the file
// the path resolves to (the ring file itself is replaced by a rename,
// which a lock on it would not survive). A run that finds the lock held
// fails at once, naming the run that holds it. The lock file stays, empty
// between runs: a run that removed it would let the next two lock two
// different files. The returned function releases the lock.
func lockRing(a *base.App, path string) (func(), error) {
	host, _ := os.Hostname()
	// Who holds it, for the runs it keeps out.
	unlock, err := publish.NewFileRing(path, publish.FileRingConfig{}).Lock(fmt.Sprintf("pid %d on host %s, since %s", os.Getpid(), host, stamp(a.Now())))
	var le *publish.LockError
	if !errors.As(err, &le) {
		if err != nil {
			return nil, keyflags.RingFileReadError(path, errors.Unwrap(err))
		}
		return func() { _ = unlock() }, nil
	}
	switch {
	case errors.Is(err, publish.ErrLocked):
		holder := "another ksa issuer rotate"
		if note := strings.TrimSpace(le.Holder); note != "" {
			holder += " (" + base.TermSafe(note) + ")"
		}
		return nil, base.Fail(nil, "wait for that run to end, then run again; a CronJob with concurrencyPolicy: Forbid starts one run at a time",
			"%s holds the lock %s on ring file %s: two runs would each rotate it (nothing was written)", holder, le.Path, path)
	case errors.Is(err, errors.ErrUnsupported):
		return nil, base.Fail(le.Err, "run the scheduled rotation on Linux or another Unix", "locking %s", le.Path)
	case errors.Is(err, fs.ErrPermission):
		return nil, base.Fail(nil, "give --ring a file in a directory the run may write (it keeps "+filepath.Base(le.Path)+" there)", "cannot create the lock file %s", le.Path)
	}
	return nil, base.Fail(le.Err, "give --ring a file in a directory the run may write, on a file system with locks", "locking %s", le.Path)
}
