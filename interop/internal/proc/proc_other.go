//go:build !linux

package proc

import (
	"os/exec"
	"syscall"
)

// Supported returns ErrUnsupported: without Pdeathsig a killed test binary
// would leave its children running.
func Supported() error { return ErrUnsupported }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func waitExited(int) error { return ErrUnsupported }

func signalGroup(int, syscall.Signal) error { return ErrUnsupported }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
