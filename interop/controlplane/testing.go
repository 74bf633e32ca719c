package controlplane

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EnvRequire, when set to a true value, makes a missing binary fail tests
// instead of skipping them, as the variable CI (set by CI services) does.
const EnvRequire = "KSA_REQUIRE_CONTROLPLANE"

// failureLogLines is how many lines of each log a failed test prints.
const failureLogLines = 30

// Required reports whether tests must fail, rather than skip, when the
// control plane cannot be started for want of a binary or of Linux: true when
// $KSA_REQUIRE_CONTROLPLANE or $CI is set to a value that [strconv.ParseBool]
// does not read as false ("0", "false", ...).
func Required() bool {
	for _, env := range []string{EnvRequire, "CI"} {
		v := os.Getenv(env)
		if v == "" {
			continue
		}
		if b, err := strconv.ParseBool(v); err != nil || b {
			return true
		}
	}
	return false
}

// StartForTest starts a control plane for t alone and stops it when t and
// its subtests are done (with t.Cleanup). It ends the test when the start
// fails: with t.Skip when a binary is missing (or the OS is not Linux) and
// [Required] is false, with t.Fatal otherwise, in both cases with the
// message naming the install command. If the test fails, the tails of the
// logs are printed before they are removed.
func StartForTest(t testing.TB, cfg Config) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), DefaultStartTimeout)
	defer cancel()
	cp, err := Start(ctx, cfg)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(cp.LogTails(failureLogLines))
		}
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cp
}

// skipOrFail ends t because of err, a failure of [Start].
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if (errors.Is(err, ErrBinaryMissing) || errors.Is(err, ErrUnsupported)) && !Required() {
		t.Skip(err)
	}
	t.Fatal(err)
}

// Shared is one control plane shared by the tests of a package, started by
// the first test that asks for it and stopped after the last test. Declare
// one in the test package, run the tests with [Shared.Run] from TestMain, and
// get the control plane with [Shared.Get]; tests keep apart by working in
// namespaces of their own ([ControlPlane.Namespace]):
//
//	var cluster controlplane.Shared
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m, controlplane.Config{})) }
//
//	func TestSomething(t *testing.T) {
//		cp := cluster.Get(t)
//		ns := cp.Namespace(t)
//		...
//	}
//
// A package whose tests need control planes configured differently declares
// one Shared per configuration. The zero value is ready for Run.
type Shared struct {
	cfg    Config
	inMain bool

	once sync.Once
	cp   *ControlPlane
	err  error
}

// Run runs the tests (m.Run) with cfg as the configuration of the control
// plane that [Shared.Get] starts, stops that control plane, and returns
// m.Run's exit code, or 1 if stopping failed. Call it once, from TestMain.
func (s *Shared) Run(m *testing.M, cfg Config) int {
	s.cfg = cfg
	s.inMain = true
	code := m.Run()
	s.once.Do(func() {}) // wait for a start still running in a stray goroutine
	if s.cp != nil {
		if err := s.cp.Stop(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Get returns the shared control plane, starting it on the first call. If
// it could not be started, every caller's test ends as [StartForTest]
// describes. If t fails, the tails of the logs are printed.
func (s *Shared) Get(t testing.TB) *ControlPlane {
	t.Helper()
	if !s.inMain {
		t.Fatal("controlplane: Shared.Get called without Shared.Run in TestMain")
	}
	s.once.Do(func() {
		// Not t.Context(): the control plane outlives t.
		ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
		defer cancel()
		s.cp, s.err = Start(ctx, s.cfg)
	})
	if s.err != nil {
		skipOrFail(t, s.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.cp.LogTails(failureLogLines))
		}
	})
	return s.cp
}

// Namespace creates a namespace for t, named after t.Name() with a random
// suffix, and in it the ServiceAccount "default", which no controller creates
// here (there is no kube-controller-manager) and without which pods that name
// no service account are refused. It ends t with t.Fatal on failure.
//
// The namespace is not deleted afterwards: with no namespace controller it
// would stay Terminating with its contents, and everything goes with
// [ControlPlane.Stop] anyway.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	ns, err := cp.clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("controlplane: creating a namespace: %v", err)
	}
	_, err = cp.clientset.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("controlplane: creating the default ServiceAccount in %s: %v", ns.Name, err)
	}
	return ns.Name
}

// namespacePrefix turns a test name into a GenerateName prefix: lower case
// letters, digits and dashes, at most 50 characters, ending in a dash.
func namespacePrefix(testName string) string {
	var b strings.Builder
	dash := true // no leading dash
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if len(name) > 49 {
		name = strings.TrimRight(name[:49], "-")
	}
	if name == "" {
		name = "test"
	}
	return name + "-"
}
