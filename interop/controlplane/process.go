package controlplane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// logTailLines is how many lines of each process's log a [StartError] shows.
const logTailLines = 40

// process is one child process: started in its own process group, killed
// with its group, and reaped by a goroutine of its own.
type process struct {
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

// startProcess runs path with args, writing its stdout and stderr to a new
// file at logPath and, if out is not nil, to out as well.
func startProcess(name, path string, args []string, logPath string, out io.Writer) (*process, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("controlplane: log file for %s: %w", name, err)
	}
	var w io.Writer = logFile
	if out != nil {
		w = io.MultiWriter(logFile, out)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second // bounds the copy to out once the process is gone
	if err := startCmd(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("controlplane: starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
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

// stop kills the process's group unless the process has already exited, and
// waits until it has been reaped. It is safe to call more than once.
func (p *process) stop() {
	p.mu.Lock()
	if !p.exited {
		_ = killGroup(p.cmd.Process.Pid)
	}
	p.mu.Unlock()
	<-p.done
}

// pid returns the process ID, which is also its process group ID.
func (p *process) pid() int { return p.cmd.Process.Pid }

// logTail returns the last n lines of the process's log, labelled.
func (p *process) logTail(n int) string {
	return fmt.Sprintf("--- last lines of %s log (%s) ---\n%s", p.name, p.logPath, tailFile(p.logPath, n))
}

// tailFile returns the last n lines of the file at path, read from at most
// its last 64 KiB, or a note saying why it could not be read.
func tailFile(path string, n int) string {
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

// lockedWriter serializes the writes of several processes' output copiers
// to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
