package podcert

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// reloader holds a value read from files and reads them again when they
// change, checked on use: the one home of the stat-on-use reload that
// [Source] (a credential) and [TrustFile] (a trust bundle) share. It runs
// no goroutine and no timer.
type reloader[T any] struct {
	paths []string
	// what names the files in errors: "credential bundle", "trust bundle".
	what string
	// max bounds the bytes of all files together.
	max int
	// parse turns the files' contents, in the order of paths, into the
	// value.
	parse    func(data [][]byte) (T, error)
	onReload func(error)
	mu       sync.Mutex // serializes loads
	// cur is the value of the last good load.
	cur atomic.Pointer[T]
	// seen are the files of the last load, good or not: a load that
	// failed is not tried again until the files change once more.
	seen atomic.Pointer[[]os.FileInfo]
}

// fileError reports a file that cannot be opened, read or used; it
// matches kind and wraps the cause (fs.ErrNotExist, a parse error, ...).
func fileError(kind error, what, path, reason string, cause error) error {
	return wrap(kind, what+" "+path+": "+reason, cause)
}

// reload reads the files now and, if they hold a valid value, serves it
// from then on. On error the previous value stays.
func (r *reloader[T]) reload(kind error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load(kind)
}

// stat returns the files' information, nil for a file it cannot stat.
func (r *reloader[T]) stat() []os.FileInfo {
	out := make([]os.FileInfo, len(r.paths))
	for i, p := range r.paths {
		if st, err := os.Stat(p); err == nil {
			out[i] = st
		}
	}
	return out
}

// same reports whether two stats name the same files: the same file
// (a rename or a symlink swap puts a new one in place), size and
// modification time (a write in place changes them), or both missing.
func same(a, b []os.FileInfo) bool {
	for i := range a {
		switch {
		case a[i] == nil || b[i] == nil:
			if a[i] != b[i] {
				return false
			}
		case !os.SameFile(a[i], b[i]) || a[i].Size() != b[i].Size() || !a[i].ModTime().Equal(b[i].ModTime()):
			return false
		}
	}
	return true
}

// load reads and parses the files; the caller holds mu.
func (r *reloader[T]) load(kind error) error {
	seen := r.stat()
	r.seen.Store(&seen)
	data := make([][]byte, len(r.paths))
	total := 0
	for i, p := range r.paths {
		f, err := os.Open(p)
		if err != nil {
			return fileError(kind, r.what, p, "cannot open", errors.Unwrap(err))
		}
		st, err := f.Stat()
		if err == nil && st.Size() > int64(r.max-total) {
			err = limit("bytes", int(min(st.Size(), 1<<30))+total, r.max)
		}
		if err == nil {
			data[i], err = readAllLimited(f, r.max-total)
		}
		_ = f.Close()
		if err != nil {
			var pathErr *os.PathError
			if errors.As(err, &pathErr) {
				err = pathErr.Err
			}
			return fileError(kind, r.what, p, "cannot read", err)
		}
		total += len(data[i])
	}
	val, err := r.parse(data)
	if err != nil {
		return fileError(kind, r.what, r.paths[0], "cannot use", err)
	}
	r.cur.Store(&val)
	return nil
}

func readAllLimited(f *os.File, max int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, limit("bytes", len(data), max)
	}
	return data, nil
}

// current returns the value to use now, loading the files again first if
// they changed since the last load, and the error of that load, if it
// failed (the previous value is then returned). onReload sees every such
// load; files that failed to load are not read again until they change.
func (r *reloader[T]) current(kind error) (T, error) {
	var loadErr error
	if seen := r.seen.Load(); !same(r.stat(), *seen) {
		r.mu.Lock()
		if seen2 := r.seen.Load(); seen2 == seen || !same(r.stat(), *seen2) {
			loadErr = r.load(kind)
			if r.onReload != nil {
				r.onReload(loadErr)
			}
		}
		r.mu.Unlock()
	}
	return *r.cur.Load(), loadErr
}
