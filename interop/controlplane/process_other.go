//go:build !linux

package controlplane

import (
	"os/exec"
	"syscall"
)

// supported returns ErrUnsupported: without Pdeathsig a killed test binary
// would leave etcd and kube-apiserver running.
func supported() error { return ErrUnsupported }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func waitExited(int) error { return ErrUnsupported }

func killGroup(int) error { return ErrUnsupported }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
