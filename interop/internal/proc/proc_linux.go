package proc

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported reports that Start works on this operating system.
func Supported() error { return nil }

// sysProcAttr puts the child in a process group of its own, so that it can be
// killed with everything it starts, and has the kernel kill it when the
// thread that started it dies (the test binary exiting or being killed).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// starter is a goroutine locked to an OS thread that it never releases, so
// that the thread lives as long as the test binary. Pdeathsig fires when the
// thread that started a child exits, and Go ends a thread when a goroutine
// locked to it returns: starting children from an ordinary goroutine would
// let an unrelated goroutine, locked later to the same thread, kill them.
var starter struct {
	once sync.Once
	reqs chan func()
}

// startCmd starts cmd from the starter's thread.
func startCmd(cmd *exec.Cmd) error {
	starter.once.Do(func() {
		starter.reqs = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range starter.reqs {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	starter.reqs <- func() { errc <- cmd.Start() }
	return <-errc
}

// waitExited blocks until the process pid has exited, without reaping it.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// signalGroup sends sig to every process in the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
