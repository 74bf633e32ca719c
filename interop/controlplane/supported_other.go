//go:build !linux

package controlplane

// supported returns ErrUnsupported: without Pdeathsig a killed test binary
// would leave etcd and kube-apiserver running.
func supported() error { return ErrUnsupported }
