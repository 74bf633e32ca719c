package controlplane

import (
	"fmt"
	"io"

	"github.com/ksa-go/ksa/interop/internal/proc"
)

// logTailLines is how many lines of each process's log a [StartError] shows.
const logTailLines = 40

// process is one child process of the control plane (package
// interop/internal/proc runs it).
type process = proc.Process

// startProcess runs path with args, writing its stdout and stderr to a new
// file at logPath and, if out is not nil, to out as well.
func startProcess(name, path string, args []string, logPath string, out io.Writer) (*process, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	p, err := proc.Start(name, path, args, logPath, proc.Config{Output: out})
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	return p, nil
}
