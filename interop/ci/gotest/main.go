// Command gotest runs go test and says what became of the control-plane
// tests, which plain go test hides: it runs "go test -json" with its
// arguments, prints what plain go test prints (one line per package, and
// the output of failing tests and packages; everything with -v), and ends
// with one line about the tests that run on a real etcd and kube-apiserver
// (interop/controlplane), such as
//
//	control plane: 30 tests in 2 packages skipped (etcd, kube-apiserver v1.37.2, kube-apiserver v1.36.3 not found); install them with .ci/install-controlplane.sh
//	control plane: 30 tests in 2 packages ran: 15 on kube-apiserver v1.37.2, 15 on v1.36.3
//
// It exits with go test's exit status. Run it from the interop module, as
// README.md's test command does:
//
//	go run ./ci/gotest [go test flags] [packages]
//
// A test counts as a control-plane test when its output holds one of the
// lines of package interop/internal/cpmark, which the harness logs: the
// release it ran on, or why it skipped.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
)

func main() {
	// go test receives the terminal's interrupt too; wait for it to report.
	signal.Ignore(os.Interrupt)
	os.Exit(run(context.Background(), "", os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json with args in dir ("" for the current directory),
// writes the report to stdout and go test's own diagnostics to stderr, and
// returns go test's exit status.
func run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "gotest: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "gotest: %v\n", err)
		return 1
	}
	r := newReport(stdout, verbose(args))
	readErr := r.read(events)
	waitErr := cmd.Wait()
	r.finish()
	if readErr != nil {
		fmt.Fprintf(stderr, "gotest: reading go test's output: %v\n", readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintf(stderr, "gotest: %v\n", waitErr)
		return 1
	case readErr != nil:
		return 1
	}
	return 0
}

// verbose reports whether args ask go test for -v output.
func verbose(args []string) bool {
	for _, a := range args {
		switch a {
		case "-v", "--v", "-v=true", "--v=true", "-test.v", "-test.v=true":
			return true
		case "-args", "--args":
			return false
		}
	}
	return false
}
