package controlplane

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/internal/cpmark"
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
// logs are printed before they are removed. It logs the release it runs
// ("controlplane: using kube-apiserver v1.37.2"), which the test runner
// interop/ci/gotest counts.
func StartForTest(t testing.TB, cfg Config) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), DefaultStartTimeout)
	defer cancel()
	cp, err := Start(ctx, cfg)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Log(cpmark.Using(cp.Version()))
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

// BinariesForTest returns the paths of etcd and of the kube-apiserver of
// version, for a test that runs them itself; it ends the test as
// [StartForTest] does when one is missing, and logs the release as
// StartForTest does.
func BinariesForTest(t testing.TB, version string) (etcd, kubeAPIServer string) {
	t.Helper()
	if err := supported(); err != nil {
		skipOrFail(t, err)
	}
	etcd, kubeAPIServer, err := Binaries(version)
	if err != nil {
		skipOrFail(t, err)
	}
	if version == "" {
		version = versions[0]
	}
	t.Log(cpmark.Using(version))
	return etcd, kubeAPIServer
}

// EachVersion runs f in a subtest of t for each release of [Versions],
// named after it ("v1.37.2"), newest first. It is for tests that start
// control planes of their own ([StartForTest] with [Config.Version] set to
// version); tests sharing one per package use [Shared.Each].
func EachVersion(t *testing.T, f func(t *testing.T, version string)) {
	t.Helper()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { f(t, v) })
	}
}

// skipOrFail ends t because of err, a failure of [Start]: a missing
// binary or an unsupported OS skips it, with a first line the test runner
// interop/ci/gotest counts, unless [Required]; anything else fails it.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	var skip cpmark.Skip
	switch {
	case errors.Is(err, ErrBinaryMissing):
		for _, m := range missingBinaries(err) {
			skip.Missing = append(skip.Missing, m.Binary())
		}
		skip.Install = InstallScript
	case errors.Is(err, ErrUnsupported):
		skip.Reason = "unsupported operating system"
	default:
		t.Fatal(err)
	}
	if Required() {
		t.Fatalf("%v\n(failing rather than skipping: $CI or $%s is set)", err, EnvRequire)
	}
	t.Skipf("%s\n%v", skip, err)
}

// missingBinaries returns every [*BinaryMissingError] in err's tree.
func missingBinaries(err error) []*BinaryMissingError {
	if m, ok := err.(*BinaryMissingError); ok {
		return []*BinaryMissingError{m}
	}
	var all []*BinaryMissingError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			all = append(all, missingBinaries(e)...)
		}
	case interface{ Unwrap() error }:
		all = missingBinaries(u.Unwrap())
	}
	return all
}

// Shared holds the control planes shared by the tests of a package, one per
// kube-apiserver release, each started by the first test that asks for it
// and stopped after the last test. Declare one in the test package, run the
// tests with [Shared.Run] from TestMain, and run each test body on every
// release of [Versions] with [Shared.Each] (or get one release's control
// plane with [Shared.Get]); tests keep apart by working in namespaces of
// their own ([ControlPlane.Namespace]):
//
//	var cluster controlplane.Shared
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m, controlplane.Config{})) }
//
//	func TestSomething(t *testing.T) {
//		cluster.Each(t, func(t *testing.T, cp *controlplane.ControlPlane) {
//			ns := cp.Namespace(t)
//			...
//		})
//	}
//
// A package whose tests need control planes configured differently declares
// one Shared per configuration. The zero value is ready for Run.
type Shared struct {
	cfg    Config
	inMain bool

	mu     sync.Mutex
	planes map[string]*sharedPlane // by release
}

// sharedPlane is the control plane of one release, started once.
type sharedPlane struct {
	once sync.Once
	cp   *ControlPlane
	err  error
}

// Run runs the tests (m.Run) with cfg as the configuration of the control
// planes that [Shared.Get] starts ([Config.Version] is set by Get), stops
// them, and returns m.Run's exit code, or 1 if stopping failed. Call it
// once, from TestMain.
func (s *Shared) Run(m *testing.M, cfg Config) int {
	s.cfg = cfg
	s.inMain = true
	code := m.Run()
	s.mu.Lock()
	planes := s.planes
	s.planes = nil
	s.mu.Unlock()
	for _, v := range slices.Sorted(maps.Keys(planes)) {
		p := planes[v]
		p.once.Do(func() {}) // wait for a start still running in a stray goroutine
		if p.cp == nil {
			continue
		}
		if err := p.cp.Stop(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Each runs f in a subtest of t for each release of [Versions], named after
// it ("v1.37.2"), newest first, with that release's shared control plane
// (see [Shared.Get]). A release whose binary is missing skips (or fails)
// its subtest only.
func (s *Shared) Each(t *testing.T, f func(t *testing.T, cp *ControlPlane)) {
	t.Helper()
	EachVersion(t, func(t *testing.T, version string) {
		f(t, s.Get(t, version))
	})
}

// Get returns the shared control plane of version ("" for the newest of
// [Versions]), starting it on the first call. If it could not be started,
// every caller's test ends as [StartForTest] describes. If t fails, the
// tails of the logs are printed.
func (s *Shared) Get(t testing.TB, version string) *ControlPlane {
	t.Helper()
	if !s.inMain {
		t.Fatal("controlplane: Shared.Get called without Shared.Run in TestMain")
	}
	if version == "" {
		version = versions[0]
	}
	s.mu.Lock()
	if s.planes == nil {
		s.planes = make(map[string]*sharedPlane)
	}
	p := s.planes[version]
	if p == nil {
		p = &sharedPlane{}
		s.planes[version] = p
	}
	s.mu.Unlock()
	p.once.Do(func() {
		// Not t.Context(): the control plane outlives t.
		ctx, cancel := context.WithTimeout(context.Background(), DefaultStartTimeout)
		defer cancel()
		cfg := s.cfg
		cfg.Version = version
		p.cp, p.err = Start(ctx, cfg)
	})
	if p.err != nil {
		skipOrFail(t, p.err)
	}
	t.Log(cpmark.Using(p.cp.Version()))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(p.cp.LogTails(failureLogLines))
		}
	})
	return p.cp
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
