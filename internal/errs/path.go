package errs

import "io/fs"

// PathCause returns the cause to wrap in an error whose message names
// path already: the cause of err when err is an *fs.PathError about path
// (its message would say the path again), err otherwise. The result still
// matches what err matched with errors.Is (fs.ErrNotExist, ...).
func PathCause(path string, err error) error {
	if pe, ok := err.(*fs.PathError); ok && pe.Path == path {
		return pe.Err
	}
	return err
}
