// Package proc runs the child processes of the interop harnesses
// (interop/controlplane's etcd and kube-apiservers, interop/node's
// containerd and kubelet): each in a process group of its own, killed by
// the kernel when the test binary dies, reaped by a goroutine of its own,
// its output in a log file whose tail a failing test prints.
//
// Only Linux is supported: elsewhere [Start] returns [ErrUnsupported].
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrUnsupported is returned by [Start] on operating systems other than
// Linux, where a child cannot be tied to the lifetime of the test binary.
var ErrUnsupported = errors.New("proc: unsupported operating system")

// Process is one child process: started in its own process group, killed
// with its group, and reaped by a goroutine of its own.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string

	// mu guards exited. The waiting goroutine sets exited once the process
	// has exited but before reaping it, so that while exited is false the
	// process ID (and the group ID equal to it) cannot belong to anyone else.
	mu     sync.Mutex
	exited bool

	done    chan struct{} // closed once the process has been reaped
	waitErr error         // the result of cmd.Wait, set before done is closed
}

// Config says how to run a process besides its path and arguments.
type Config struct {
	// Env is its environment. Zero: the test binary's.
	Env []string
	// Dir is its working directory. Zero: the test binary's.
	Dir string
	// Output, when not nil, receives its output besides the log file; it
	// must stay usable until the process has been reaped.
	Output io.Writer
}

// Start runs path with args, as name in messages, writing its stdout and
// stderr to a new file at logPath (and to cfg.Output).
func Start(name, path string, args []string, logPath string, cfg Config) (*Process, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file for %s: %w", name, err)
	}
	var w io.Writer = logFile
	if cfg.Output != nil {
		w = io.MultiWriter(logFile, cfg.Output)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second // bounds the copy to Output once the process is gone
	if err := startCmd(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = waitExited(cmd.Process.Pid) // on error, fall through to Wait, which reports it
		p.mu.Lock()
		p.exited = true
		p.mu.Unlock()
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Kill kills the process's group unless the process has already exited,
// and waits until it has been reaped. It is safe to call more than once.
func (p *Process) Kill() {
	p.signalGroup(syscall.SIGKILL)
	<-p.done
}

// Terminate sends SIGTERM to the process's group, waits up to grace for
// the process to exit, then kills the group as [Process.Kill] does. It
// reports whether the process exited before the grace period ended.
func (p *Process) Terminate(grace time.Duration) bool {
	p.signalGroup(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		p.Kill()
		return false
	}
}

// signalGroup sends sig to the process's group unless the process has
// exited.
func (p *Process) signalGroup(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		_ = signalGroup(p.cmd.Process.Pid, sig)
	}
}

// PID returns the process ID, which is also its process group ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns how the process ended (cmd.Wait's error); call it after
// [Process.Done] is closed.
func (p *Process) Err() error { return p.waitErr }

// LogPath returns the path of its log file.
func (p *Process) LogPath() string { return p.logPath }

// LogTail returns the last n lines of the process's log, labelled.
func (p *Process) LogTail(n int) string {
	return fmt.Sprintf("--- last lines of %s log (%s) ---\n%s", p.name, p.logPath, TailFile(p.logPath, n))
}

// TailFile returns the last n lines of the file at path, read from at most
// its last 64 KiB, or a note saying why it could not be read.
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	defer f.Close()
	const max = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return fmt.Sprintf("(%v)\n", err)
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	lines := strings.SplitAfter(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n"
}

// LockedWriter serializes the writes of several processes' output copiers
// to one writer.
type LockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLockedWriter returns a LockedWriter writing to w.
func NewLockedWriter(w io.Writer) *LockedWriter { return &LockedWriter{w: w} }

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
