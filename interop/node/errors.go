package node

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBinaryMissing is matched by every error that reports a program that
// could not be found; the error itself is a [*BinaryMissingError].
var ErrBinaryMissing = errors.New("node: binary missing")

// ErrUnsupported is returned by [Start] on operating systems other than
// Linux.
var ErrUnsupported = errors.New("node: unsupported operating system")

// ErrNotReady is matched by the errors of [Start] when containerd or the
// kubelet exits or is not ready in time, and of [Node.RunPod] when a pod
// does not run.
var ErrNotReady = errors.New("node: not ready")

// ErrImageNotFound is matched by the error of [Node.ImageDigest] when
// the node's containerd has no image of that name.
var ErrImageNotFound = errors.New("node: image not found")

// ErrInvalidConfig is matched by errors about a [Config] or a pod that
// cannot be used.
var ErrInvalidConfig = errors.New("node: invalid config")

// BinaryMissingError reports that a program of [Binaries] was not found.
// It matches [ErrBinaryMissing].
type BinaryMissingError struct {
	// Name is the program: "containerd", "runc", "kubelet", ...
	Name string
	// Version is the release looked for (the kubelet's), or empty.
	Version string
	// Looked lists every place searched, in order, each followed by what
	// was found there when it was a kubelet of another release.
	Looked []string
	// Install is the command that installs or builds the program.
	Install string
}

// Error names the program, where it was looked for and how to get it.
func (e *BinaryMissingError) Error() string {
	return fmt.Sprintf("node: %s not found (looked in %s); install it with: %s",
		e.program(), strings.Join(e.Looked, ", "), e.Install)
}

// program returns the name and, for the kubelet, the release.
func (e *BinaryMissingError) program() string {
	if e.Version == "" {
		return e.Name
	}
	return e.Name + " " + e.Version
}

// Is reports whether target is [ErrBinaryMissing].
func (e *BinaryMissingError) Is(target error) bool { return target == ErrBinaryMissing }
