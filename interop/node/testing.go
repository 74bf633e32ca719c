package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ksa-go/ksa/internal/skipmark"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/internal/cpmark"
)

// failureLogLines is how many lines of each log a failed test prints.
const failureLogLines = 40

// ControlPlaneConfig returns cfg made fit for a node: kube-apiserver
// [Version], and the admission plugin NodeRestriction added (the Node
// authorizer is on by default), so that the kubelet has a real node's
// rights and no more.
func ControlPlaneConfig(cfg controlplane.Config) controlplane.Config {
	cfg.Version = Version
	if !slices.Contains(cfg.EnableAdmissionPlugins, "NodeRestriction") {
		cfg.EnableAdmissionPlugins = append(slices.Clone(cfg.EnableAdmissionPlugins), "NodeRestriction")
	}
	return cfg
}

// BinariesForTest returns the node's programs, or ends t: with t.Skip
// when one is missing (or the OS is not Linux) and controlplane.Required
// is false ($CI and $KSA_REQUIRE_CONTROLPLANE unset), with t.Fatal
// otherwise. The skip's first line names what is missing and
// [InstallScript], for the test runner interop/ci/gotest to count.
func BinariesForTest(t testing.TB) Binaries {
	t.Helper()
	skip := skipmark.Skip{Subject: cpmark.NodeSubject, Install: InstallScript}
	var err error
	var b Binaries
	if err = supportedOS(); err != nil {
		skip.Reason, skip.Install = "unsupported operating system", ""
	} else if b, err = FindBinaries(); err != nil {
		for _, m := range missing(err) {
			skip.Missing = append(skip.Missing, m.Binary())
		}
	}
	if err == nil {
		return b
	}
	if controlplane.Required() {
		t.Fatalf("%v\n(failing rather than skipping: $CI or $%s is set)", err, controlplane.EnvRequire)
	}
	t.Skipf("%s\n%v", skip, err)
	return b
}

// supportedOS returns ErrUnsupported elsewhere than Linux.
func supportedOS() error {
	if err := procSupported(); err != nil {
		return ErrUnsupported
	}
	return nil
}

// missing returns every [*BinaryMissingError] in err's tree, each program
// once.
func missing(err error) []*BinaryMissingError {
	var all []*BinaryMissingError
	var walk func(error)
	walk = func(err error) {
		var m *BinaryMissingError
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		default:
			if errors.As(err, &m) && !slices.ContainsFunc(all, func(x *BinaryMissingError) bool { return x.Name == m.Name }) {
				all = append(all, m)
			}
		}
	}
	walk(err)
	return all
}

// StartForTest starts a node on cp for t and stops it when t and its
// subtests are done, failing t if the teardown fails or leaves anything
// ([Node.Leftovers]). A missing program ends t as [BinariesForTest] says;
// any other failure to start fails it. It logs the release it runs ("node:
// using kubelet v1.37.2"), which interop/ci/gotest counts, and prints the
// tails of the logs if t fails.
func StartForTest(t testing.TB, cp *controlplane.ControlPlane, cfg Config) *Node {
	t.Helper()
	BinariesForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), DefaultStartTimeout)
	defer cancel()
	n, err := Start(ctx, cp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(cpmark.NodeUsing(Version))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.LogTails(failureLogLines))
		}
		if err := n.Stop(); err != nil {
			t.Error(err)
		}
		if left := n.Leftovers(); len(left) > 0 {
			t.Errorf("node %s left on the machine:\n%s", n.Name, strings.Join(left, "\n"))
		}
	})
	return n
}

// Shared holds one control plane ([ControlPlaneConfig]) and one node on
// it for all the tests of a package, started by the first test that asks
// and stopped after the last one. Run the tests with [Shared.Run] from
// TestMain and get the node with [Shared.Get]; tests keep apart in
// namespaces of their own ([Node.Namespace]):
//
//	var cluster node.Shared
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m, controlplane.Config{}, node.Config{})) }
//
//	func TestSomething(t *testing.T) {
//		n := cluster.Get(t)
//		ns := n.Namespace(t)
//		pod, err := n.RunPod(t.Context(), ns, node.ProbePod("probe", "/etc/hostname"))
//		...
//	}
//
// The zero value is ready for Run.
type Shared struct {
	cpCfg  controlplane.Config
	cfg    Config
	inMain bool

	once sync.Once
	cp   *controlplane.ControlPlane
	node *Node
	err  error
}

// Run runs the tests (m.Run) with cpCfg (made fit by
// [ControlPlaneConfig]) and cfg as the configurations [Shared.Get] starts
// with, then stops the node and the control plane, and returns m.Run's
// exit code, or 1 if the teardown failed or left anything on the machine
// (said on stderr). Call it once, from TestMain.
func (s *Shared) Run(m *testing.M, cpCfg controlplane.Config, cfg Config) int {
	s.cpCfg, s.cfg, s.inMain = ControlPlaneConfig(cpCfg), cfg, true
	code := m.Run()
	s.once.Do(func() {}) // wait for a start still running in a stray goroutine
	fail := func(msg string) {
		fmt.Fprintln(os.Stderr, msg)
		code = 1
	}
	if s.node != nil {
		if err := s.node.Stop(); err != nil {
			fail(err.Error())
		}
		if left := s.node.Leftovers(); len(left) > 0 {
			fail(fmt.Sprintf("node %s left on the machine:\n%s", s.node.Name, strings.Join(left, "\n")))
		}
	}
	if s.cp != nil {
		if err := s.cp.Stop(); err != nil {
			fail(err.Error())
		}
	}
	return code
}

// Get returns the shared node, starting it (and its control plane) on
// the first call. A missing program ends t as [BinariesForTest] and
// controlplane.BinariesForTest say; a failure to start fails every
// caller. It logs both releases, for interop/ci/gotest to count, and
// prints the tails of the node's logs if t fails.
func (s *Shared) Get(t testing.TB) *Node {
	t.Helper()
	if !s.inMain {
		t.Fatal("node: Shared.Get called without Shared.Run in TestMain")
	}
	BinariesForTest(t)
	controlplane.BinariesForTest(t, Version)
	s.once.Do(func() {
		// Not t.Context(): the node outlives t.
		ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
		defer cancel()
		s.cp, s.err = controlplane.Start(ctx, s.cpCfg)
		if s.err != nil {
			return
		}
		s.node, s.err = Start(ctx, s.cp, s.cfg)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Log(cpmark.NodeUsing(Version))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.node.LogTails(failureLogLines))
		}
	})
	return s.node
}

// Namespace creates a namespace for t with what its pods need
// ([Node.PrepareNamespace]) and returns its name; it ends t with t.Fatal
// on failure. Like controlplane's, the namespace is not deleted.
func (n *Node) Namespace(t testing.TB) string {
	t.Helper()
	ns := n.cp.Namespace(t)
	if err := n.PrepareNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns
}
