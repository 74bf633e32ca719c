package node

import (
	"errors"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// ErrBinaryMissing is matched by every error that reports a program that
// could not be found; the error itself is a [*BinaryMissingError]. It is
// the control plane's: a missing program of the node (containerd, runc,
// the kubelet) is reported as a missing etcd or kube-apiserver is.
var ErrBinaryMissing = controlplane.ErrBinaryMissing

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

// BinaryMissingError reports that a program of [Binaries] was not found
// (Name "containerd", "runc", "kubelet", ...; Version the kubelet's
// release, or empty). It matches [ErrBinaryMissing].
type BinaryMissingError = controlplane.BinaryMissingError
