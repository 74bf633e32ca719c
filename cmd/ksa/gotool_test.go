package main

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of what ksa links (deps_test.go, buildtags_test.go,
// storetags_test.go) ask the go command, as a builder of ksa would. Listing
// dependencies (go list -deps) loads packages without compiling them; the
// few builds they need run without cgo, so that all of them share one
// compiled standard library and library: on a fresh machine that is about a
// minute of CPU, where one build per configuration with the cloud SDKs
// took most of go test's ten minutes.

// noCgo is the environment of the builds these tests make.
const noCgo = "CGO_ENABLED=0"

// goCommand returns the path of the go command, or skips the test.
func goCommand(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	return goTool
}

// buildConfig is one way to build ksa: an environment variable (such as
// CGO_ENABLED=0) and build tags, each possibly empty.
type buildConfig struct {
	env  string
	tags string
}

// depsByConfig holds the dependency lists already made by this test
// binary, by build configuration: several tests ask for the same (the
// default build's three times).
var depsByConfig sync.Map // buildConfig → *depsOnce

type depsOnce struct {
	once sync.Once
	deps packages
	out  string
	err  error
}

// linkedPackages returns the packages ksa links when built with c, from go
// list -deps, listed once per configuration and test binary.
func linkedPackages(t *testing.T, c buildConfig) packages {
	t.Helper()
	goTool := goCommand(t)
	v, _ := depsByConfig.LoadOrStore(c, &depsOnce{})
	d := v.(*depsOnce)
	d.once.Do(func() {
		args := []string{"list", "-deps"}
		if c.tags != "" {
			args = append(args, "-tags", c.tags)
		}
		cmd := exec.Command(goTool, append(args, ".")...)
		cmd.Env = os.Environ()
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		var out []byte
		out, d.err = cmd.Output()
		var exit *exec.ExitError
		if d.err != nil && errors.As(d.err, &exit) {
			d.out = string(exit.Stderr)
		}
		d.deps = strings.Fields(string(out))
	})
	require.NoError(t, d.err, "go list -deps (%+v): %s", c, d.out)
	return d.deps
}

// packages is a list of import paths.
type packages []string

// links reports whether the list holds the package path, or a package
// under it (a module path, a path ending with a slash).
func (p packages) links(path string) bool {
	under := strings.TrimSuffix(path, "/") + "/"
	return slices.ContainsFunc(p, func(pkg string) bool { return pkg == path || strings.HasPrefix(pkg, under) })
}

// goNoCgo runs the go command with args, cgo off, and returns its output;
// the test fails if the command does.
func goNoCgo(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(goCommand(t), args...)
	cmd.Env = append(os.Environ(), noCgo)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s (%s):\n%s", strings.Join(args, " "), noCgo, out)
	return string(out)
}
