// Command gotest runs go test and says what became of the tests that
// skipped for want of a program, which plain go test hides: it runs "go
// test -json" with its arguments, prints what plain go test prints (one
// line per package, and the output of failing tests and packages;
// everything with -v), and ends with one line for each program such tests
// need, how many skipped and the command that installs it, one line
// about the tests that run a real node (interop/node: containerd and a
// kubelet), and one about the tests that run on a real etcd and
// kube-apiserver (interop/controlplane), last, such as
//
//	SoftHSM2: 14 tests in 4 packages skipped (softhsm2-util not found); install it with apt-get install -y softhsm2
//	node: 4 tests in 1 package skipped (containerd, runc, kubelet v1.37.2 not found); install them with .ci/install-node.sh
//	control plane: 30 tests in 2 packages skipped (etcd, kube-apiserver v1.37.2, kube-apiserver v1.36.3 not found); install them with .ci/install-controlplane.sh
//
// or, when they ran,
//
//	node: 4 tests in 1 package ran: 4 on kubelet v1.37.2
//	control plane: 34 tests in 3 packages ran: 19 on kube-apiserver v1.37.2, 15 on v1.36.3
//
// It exits with go test's exit status. Each -C DIR starts another go test,
// in DIR (a module of its own, say), with the arguments that follow, up to
// the next -C; the arguments before the first -C run in the current
// directory. Every run goes to the end, one after the other, and the
// status is the first that is not 0; the lines on skipped tests count
// them all. Run it from the interop module, as README.md's test command
// does:
//
//	go run ./ci/gotest [-C DIR] [go test flags] [packages] [-C DIR ...]
//
// A test counts when its output holds a line of the module's
// internal/skipmark (the key-store stand-ins', Azurite's and the
// harness's skips) or of package interop/internal/cpmark (the release a
// control-plane test ran on, the kubelet a node test ran).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
)

func main() {
	// go test receives the terminal's interrupt too; wait for it to report.
	signal.Ignore(os.Interrupt)
	runs, err := splitRuns(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gotest: %v\n", err)
		os.Exit(2)
	}
	os.Exit(run(context.Background(), runs, os.Stdout, os.Stderr))
}

// goTest is one run of go test: in dir ("" for the current directory),
// with args.
type goTest struct {
	dir  string
	args []string
}

// splitRuns splits the arguments into runs at each -C DIR (or -C=DIR).
func splitRuns(args []string) ([]goTest, error) {
	runs := []goTest{{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		dir, isC := strings.CutPrefix(a, "-C=")
		switch {
		case a == "-C":
			if i+1 >= len(args) || args[i+1] == "" {
				return nil, errors.New("-C needs a directory: -C DIR [go test flags] [packages]")
			}
			i++
			dir, isC = args[i], true
		case isC && dir == "":
			return nil, errors.New("-C needs a directory: -C DIR [go test flags] [packages]")
		}
		if !isC {
			last := &runs[len(runs)-1]
			last.args = append(last.args, a)
			continue
		}
		if first := runs[0]; len(runs) == 1 && first.dir == "" && len(first.args) == 0 {
			runs = runs[:0]
		}
		runs = append(runs, goTest{dir: dir})
	}
	return runs, nil
}

// run runs go test -json for each of runs, writes one report of them all
// to stdout and go test's own diagnostics to stderr, and returns the first
// exit status that is not 0.
func run(ctx context.Context, runs []goTest, stdout, stderr io.Writer) int {
	r := newReport(stdout, false)
	status := 0
	for _, gt := range runs {
		r.verbose = verbose(gt.args)
		if s := runOne(ctx, r, gt, stderr); status == 0 {
			status = s
		}
	}
	r.finish()
	return status
}

// runOne runs one go test into the report and returns its exit status.
func runOne(ctx context.Context, r *report, gt goTest, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, gt.args...)...)
	cmd.Dir = gt.dir
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
	readErr := r.read(events)
	waitErr := cmd.Wait()
	r.endRun()
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
