package controlplane

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBinaryMissing is matched (with [errors.Is]) by every error that reports a
// binary that could not be found; the error itself is a [*BinaryMissingError].
var ErrBinaryMissing = errors.New("controlplane: binary missing")

// ErrNotReady is matched by every [*StartError]: a process exited or did not
// pass its readiness check before the deadline.
var ErrNotReady = errors.New("controlplane: not ready")

// ErrUnsupported is returned by [Start] on operating systems other than Linux,
// where the processes cannot be tied to the lifetime of the test binary.
var ErrUnsupported = errors.New("controlplane: unsupported operating system")

// ErrInvalidConfig is matched by errors that [Start] returns for a [Config]
// it cannot use, such as a signing key of an unsupported type.
var ErrInvalidConfig = errors.New("controlplane: invalid config")

// BinaryMissingError reports that a binary ([Etcd] or [KubeAPIServer], or
// a program of package node's) was not found. It matches [ErrBinaryMissing].
type BinaryMissingError struct {
	// Name is the binary's name: "etcd" or "kube-apiserver".
	Name string
	// Version is the kube-apiserver release looked for, such as "v1.37.2";
	// empty for etcd.
	Version string
	// Looked lists, in order, every place that was searched, such as
	// "$KSA_ETCD=/nonexistent" or "$PATH", each followed by what was found
	// there when it was a kube-apiserver of another release:
	// "bin/kube-apiserver-1.37 (v1.37.1)".
	Looked []string
	// Install is the shell command that installs or builds the binary.
	Install string
}

// Error names the binary, where it was looked for and how to get it.
func (e *BinaryMissingError) Error() string {
	return fmt.Sprintf("controlplane: %s not found (looked in %s); install it with: %s",
		e.Binary(), strings.Join(e.Looked, ", "), e.Install)
}

// Binary returns the name and, for kube-apiserver or the kubelet, the
// release: "kube-apiserver v1.37.2".
func (e *BinaryMissingError) Binary() string {
	if e.Version == "" {
		return e.Name
	}
	return e.Name + " " + e.Version
}

// Is reports whether target is [ErrBinaryMissing].
func (e *BinaryMissingError) Is(target error) bool { return target == ErrBinaryMissing }

// StartError reports that a process of the control plane did not become
// ready; it matches [ErrNotReady]. Its message ends with the tail of the logs
// of every process started so far, which usually names the cause (a bad
// flag, a port in use).
type StartError struct {
	// Component is "etcd" or "kube-apiserver".
	Component string
	// Err is the cause: it wraps the exit status ([*exec.ExitError]) if the
	// process exited, or else the context's error with the last readiness
	// check's answer.
	Err error
	// Logs holds the last lines of each process's output, labelled by name.
	Logs string
}

// Error describes the failure followed by the log tails.
func (e *StartError) Error() string {
	msg := fmt.Sprintf("controlplane: %s not ready: %v", e.Component, e.Err)
	if e.Logs != "" {
		msg += "\n" + e.Logs
	}
	return msg
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrNotReady].
func (e *StartError) Is(target error) bool { return target == ErrNotReady }
