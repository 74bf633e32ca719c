//go:build linux

package controlplane_test

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/internal/cpmark"
)

// TestBinaryMissing points one binary's variable at a path that does not
// exist, the other's at a stand-in, and expects Start to report the missing
// one, without starting anything.
func TestBinaryMissing(t *testing.T) {
	newest := controlplane.Versions()[0]
	for _, tc := range []struct{ name, version, env, otherEnv string }{
		{controlplane.Etcd, "", controlplane.EnvEtcd, controlplane.EnvKubeAPIServer},
		{controlplane.KubeAPIServer, newest, controlplane.EnvKubeAPIServer, controlplane.EnvEtcd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateBinaries(t)
			missing := filepath.Join(t.TempDir(), "no-"+tc.name)
			t.Setenv(tc.env, missing)
			t.Setenv(tc.otherEnv, fakeAPIServer(t, newest)) // never run as etcd
			cp, err := controlplane.Start(t.Context(), controlplane.Config{})
			if cp != nil {
				_ = cp.Stop()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, controlplane.ErrBinaryMissing) {
				t.Fatalf("err = %v, want ErrBinaryMissing", err)
			}
			var bm *controlplane.BinaryMissingError
			if !errors.As(err, &bm) {
				t.Fatalf("err = %v, want a *BinaryMissingError", err)
			}
			want := "$" + tc.env + "=" + missing
			if bm.Name != tc.name || bm.Version != tc.version || !slices.Equal(bm.Looked, []string{want}) || !strings.Contains(bm.Install, controlplane.InstallScript) {
				t.Errorf("error = %+v; want Name %s, Version %q, Looked [%s], Install naming %s", bm, tc.name, tc.version, want, controlplane.InstallScript)
			}
		})
	}
}

// TestFindKubeAPIServer checks where Binaries looks for each release's
// kube-apiserver, in which order, and that it takes only a binary that
// reports that release, using stand-ins that print a version.
func TestFindKubeAPIServer(t *testing.T) {
	const v136, v137 = "v1.36.3", "v1.37.2"
	env136 := controlplane.EnvKubeAPIServerFor(v136)
	if env136 != "KSA_KUBE_APISERVER_1_36" {
		t.Fatalf("EnvKubeAPIServerFor(%s) = %s, want KSA_KUBE_APISERVER_1_36", v136, env136)
	}
	type dirs struct{ bin, assets, path string }
	for _, tc := range []struct {
		name string
		// setup places stand-ins and sets variables; it returns the path
		// Binaries must find, or "" if it must find none.
		setup      func(t *testing.T, d dirs) string
		wantLooked []string // with the directories as "BIN", "ASSETS", "PATH"
	}{
		{
			name: "release variable first",
			setup: func(t *testing.T, d dirs) string {
				t.Setenv(controlplane.EnvKubeAPIServer, writeAPIServer(t, d.path, "any", v136))
				want := writeAPIServer(t, d.assets, "mine", v136)
				t.Setenv(env136, want)
				return want
			},
		},
		{
			name: "release variable of another release, then nothing else",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.bin, "kube-apiserver-1.36", v136)
				t.Setenv(env136, writeAPIServer(t, d.assets, "kube-apiserver", v137))
				return ""
			},
			wantLooked: []string{"$KSA_KUBE_APISERVER_1_36=ASSETS/kube-apiserver (v1.37.2)"},
		},
		{
			name: "KSA_KUBE_APISERVER of this release",
			setup: func(t *testing.T, d dirs) string {
				want := writeAPIServer(t, d.assets, "kube-apiserver", v136)
				t.Setenv(controlplane.EnvKubeAPIServer, want)
				return want
			},
		},
		{
			name: "KSA_KUBE_APISERVER of another release, then nothing else",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.bin, "kube-apiserver-1.36", v136)
				t.Setenv(controlplane.EnvKubeAPIServer, writeAPIServer(t, d.assets, "kube-apiserver", v137))
				return ""
			},
			wantLooked: []string{"$KSA_KUBE_APISERVER=ASSETS/kube-apiserver (v1.37.2)"},
		},
		{
			name: "bin/ of the interop module",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.assets, "kube-apiserver", v136)
				return writeAPIServer(t, d.bin, "kube-apiserver-1.36", v136)
			},
		},
		{
			name: "a stale bin/, then KUBEBUILDER_ASSETS",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.bin, "kube-apiserver-1.36", "v1.36.2")
				writeAPIServer(t, d.path, "kube-apiserver", v136)
				return writeAPIServer(t, d.assets, "kube-apiserver", v136)
			},
		},
		{
			name: "PATH",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.assets, "kube-apiserver", v137)
				return writeAPIServer(t, d.path, "kube-apiserver", v136)
			},
		},
		{
			name: "another release everywhere",
			setup: func(t *testing.T, d dirs) string {
				writeAPIServer(t, d.bin, "kube-apiserver-1.36", "v1.36.2")
				writeAPIServer(t, d.assets, "kube-apiserver", v137)
				writeAPIServer(t, d.path, "kube-apiserver", "v1.35.0")
				return ""
			},
			wantLooked: []string{
				"BIN/kube-apiserver-1.36 (v1.36.2)", "ASSETS/kube-apiserver (v1.37.2)",
				"$PATH: PATH/kube-apiserver (v1.35.0)",
			},
		},
		{
			name:       "nothing",
			setup:      func(*testing.T, dirs) string { return "" },
			wantLooked: []string{"BIN/kube-apiserver-1.36", "ASSETS/kube-apiserver", "$PATH"},
		},
		{
			name: "a binary that is not kube-apiserver",
			setup: func(t *testing.T, d dirs) string {
				writeScript(t, d.path, "kube-apiserver", "echo etcd Version: 3.4.23")
				return ""
			},
			wantLooked: []string{"BIN/kube-apiserver-1.36", "ASSETS/kube-apiserver", `$PATH: PATH/kube-apiserver (--version printed "etcd Version: 3.4.23")`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dirs{bin: t.TempDir(), assets: t.TempDir(), path: t.TempDir()}
			isolateBinaries(t)
			controlplane.SetBinDir(t, d.bin)
			t.Setenv("KUBEBUILDER_ASSETS", d.assets)
			t.Setenv("PATH", d.path)
			t.Setenv(controlplane.EnvEtcd, writeScript(t, t.TempDir(), "etcd", "exit 1"))
			want := tc.setup(t, d)

			_, got, err := controlplane.Binaries(v136)
			if want != "" {
				if err != nil || got != want {
					t.Fatalf("Binaries = %q, %v; want %q", got, err, want)
				}
				return
			}
			var bm *controlplane.BinaryMissingError
			if !errors.As(err, &bm) || got != "" {
				t.Fatalf("Binaries = %q, %v; want a *BinaryMissingError", got, err)
			}
			looked := strings.NewReplacer(d.bin, "BIN", d.assets, "ASSETS", d.path, "PATH")
			for i := range bm.Looked {
				bm.Looked[i] = looked.Replace(bm.Looked[i])
			}
			if bm.Name != controlplane.KubeAPIServer || bm.Version != v136 || !slices.Equal(bm.Looked, tc.wantLooked) {
				t.Errorf("error = %+v; want kube-apiserver %s, Looked %q", bm, v136, tc.wantLooked)
			}
		})
	}
}

// isolateBinaries clears every variable that names a binary, so that a test
// sees only the stand-ins it sets up.
func isolateBinaries(t *testing.T) {
	t.Helper()
	for _, env := range []string{controlplane.EnvEtcd, controlplane.EnvKubeAPIServer} {
		t.Setenv(env, "")
	}
	for _, v := range controlplane.Versions() {
		t.Setenv(controlplane.EnvKubeAPIServerFor(v), "")
	}
}

// fakeAPIServer writes a stand-in for kube-apiserver that reports version
// and does nothing else, and returns its path.
func fakeAPIServer(t *testing.T, version string) string {
	t.Helper()
	return writeAPIServer(t, t.TempDir(), "kube-apiserver", version)
}

func writeAPIServer(t *testing.T, dir, name, version string) string {
	t.Helper()
	return writeScript(t, dir, name, "echo Kubernetes "+version)
}

// writeScript writes an executable shell script named name in dir, with
// body after its #! line, and returns its path.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStartErrorShowsLogs gives kube-apiserver a flag it does not know and
// expects a StartError that quotes its complaint.
func TestStartErrorShowsLogs(t *testing.T) {
	controlplane.EachVersion(t, testStartErrorShowsLogs)
}

func testStartErrorShowsLogs(t *testing.T, version string) {
	controlplane.BinariesForTest(t, version)
	var output bytes.Buffer
	cp, err := controlplane.Start(t.Context(), controlplane.Config{
		Version:   version,
		ExtraArgs: []string{"--no-such-flag=1"},
		Output:    &output,
	})
	if cp != nil {
		_ = cp.Stop()
		t.Fatal("Start succeeded")
	}
	var se *controlplane.StartError
	if !errors.As(err, &se) || se.Component != controlplane.KubeAPIServer {
		t.Fatalf("err = %v, want a *StartError for kube-apiserver", err)
	}
	var exit *exec.ExitError
	if !errors.Is(err, controlplane.ErrNotReady) || !errors.As(err, &exit) {
		t.Errorf("err = %v, want ErrNotReady wrapping an *exec.ExitError", err)
	}
	if !strings.Contains(se.Logs, "unknown flag: --no-such-flag") || !strings.Contains(err.Error(), "unknown flag: --no-such-flag") {
		t.Errorf("error lacks kube-apiserver's complaint:\n%v", err)
	}
	// Start has stopped both processes, so their output is complete.
	if out := output.String(); !strings.Contains(out, "unknown flag: --no-such-flag") || !strings.Contains(out, "etcd") {
		t.Errorf("Output lacks the output of etcd and kube-apiserver:\n%s", out)
	}
}

// recordingTB stands in for a test, recording how StartForTest ends it.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recordingTB) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recordingTB) Skipf(format string, args ...any) { r.Skip(fmt.Sprintf(format, args...)) }

func (r *recordingTB) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }

// TestStartForTestMissingBinary checks that a missing binary skips the test
// with the line the test runner counts, unless CI or
// KSA_REQUIRE_CONTROLPLANE asks for failure; a missing release of
// kube-apiserver as much as a missing etcd.
func TestStartForTestMissingBinary(t *testing.T) {
	const oldest = "v1.36.3"
	for _, missing := range []string{controlplane.Etcd, controlplane.KubeAPIServer + " " + oldest} {
		for _, tc := range []struct {
			ci, require string
			wantFail    bool
		}{
			{},
			{ci: "false", require: "0"},
			{ci: "true", wantFail: true},
			{require: "1", wantFail: true},
			{ci: "yes", wantFail: true}, // not a boolean, but set: be strict
		} {
			t.Run(fmt.Sprintf("%s,CI=%q,require=%q", missing, tc.ci, tc.require), func(t *testing.T) {
				t.Setenv("CI", tc.ci)
				t.Setenv(controlplane.EnvRequire, tc.require)
				isolateBinaries(t)
				etcd, apiserver := filepath.Join(t.TempDir(), "no-etcd"), fakeAPIServer(t, oldest)
				if missing != controlplane.Etcd {
					etcd, apiserver = fakeAPIServer(t, oldest), fakeAPIServer(t, "v1.37.2")
				}
				t.Setenv(controlplane.EnvEtcd, etcd)
				t.Setenv(controlplane.EnvKubeAPIServerFor(oldest), apiserver)
				rec := &recordingTB{TB: t}
				done := make(chan struct{})
				go func() {
					defer close(done)
					controlplane.StartForTest(rec, controlplane.Config{Version: oldest})
				}()
				<-done
				if rec.failed != tc.wantFail || rec.skipped == tc.wantFail {
					t.Errorf("failed = %v, skipped = %v; want failed = %v", rec.failed, rec.skipped, tc.wantFail)
				}
				if !strings.Contains(rec.msg, controlplane.InstallScript) || !strings.Contains(rec.msg, missing+" not found") {
					t.Errorf("message %q does not name %s and %s", rec.msg, missing, controlplane.InstallScript)
				}
				if tc.wantFail {
					return
				}
				first, _, _ := strings.Cut(rec.msg, "\n")
				want := cpmark.Skip{Missing: []string{missing}, Install: controlplane.InstallScript}
				if skip, ok := cpmark.ParseSkip(first); !ok || !reflect.DeepEqual(skip, want) {
					t.Errorf("first line %q, want %q", first, want)
				}
			})
		}
	}
}

// TestLifecycle starts a control plane with every key and CA option set,
// checks that kube-apiserver uses them, then stops it and checks that
// nothing is left.
func TestLifecycle(t *testing.T) {
	controlplane.EachVersion(t, testLifecycle)
}

func testLifecycle(t *testing.T, version string) {
	signingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	oldKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := selfSignedCA(t)
	cfg := controlplane.Config{
		Version:            version,
		Issuers:            []string{"https://issuer.ksa.example", controlplane.DefaultIssuer},
		SigningKey:         signingKey,
		VerificationKeys:   []crypto.PublicKey{&oldKey.PublicKey},
		ClientCAs:          []*x509.Certificate{otherCA},
		AuthorizationModes: []string{"RBAC"},
	}

	start := time.Now()
	cp := controlplane.StartForTest(t, cfg)
	ready := time.Since(start)
	if cp.Version() != version {
		t.Errorf("Version() = %s, want %s", cp.Version(), version)
	}

	// The key files hold the keys, in order; the JWKS serves them all.
	wantKeys := []crypto.PublicKey{&signingKey.PublicKey, &oldKey.PublicKey}
	if len(cp.Files.VerificationKeys) != len(wantKeys) {
		t.Fatalf("%d verification key files, want %d", len(cp.Files.VerificationKeys), len(wantKeys))
	}
	for i, path := range cp.Files.VerificationKeys {
		if k := readPublicKey(t, path); !equalKeys(k, wantKeys[i]) || !equalKeys(cp.VerificationKeys[i], wantKeys[i]) {
			t.Errorf("verification key %d (%s) is not the configured one", i, path)
		}
	}
	jwks := fetchJWKS(t.Context(), t, cp)
	for i, want := range wantKeys {
		if !slices.ContainsFunc(slices.Collect(maps.Values(jwks)), func(k jwk) bool { return equalKeys(k.publicKey(t), want) }) {
			t.Errorf("JWKS lacks verification key %d", i)
		}
	}
	if got := readCerts(t, cp.Files.ClientCA); len(got) != 2 || !got[0].Equal(cp.CACert) || !got[1].Equal(otherCA) {
		t.Errorf("client CA file holds %d certificates, want the control plane's CA and the configured one", len(got))
	}
	if !slices.Contains(cp.APIServerArgs, "--authorization-mode=RBAC") {
		t.Errorf("args %q lack --authorization-mode=RBAC", cp.APIServerArgs)
	}

	// Tokens are signed with the ECDSA key and issued by the first issuer.
	tr, err := cp.Clientset().CoreV1().ServiceAccounts(cp.Namespace(t)).CreateToken(t.Context(), "default",
		&authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, claims := parseJWT(t, tr.Status.Token, &signingKey.PublicKey); claims.Iss != cfg.Issuers[0] {
		t.Errorf("iss = %q, want %q", claims.Iss, cfg.Issuers[0])
	}

	pids := cp.PIDs()
	start = time.Now()
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Since(start)
	t.Logf("start to ready: %v; stop: %v", ready.Round(time.Millisecond), stopped.Round(time.Millisecond))
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if len(pids) != 2 {
		t.Fatalf("PIDs() = %v, want two", pids)
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			t.Errorf("process %d after Stop: kill(0) = %v, want ESRCH", pid, err)
		}
	}
	for _, d := range []string{cp.Files.Dir, cp.Files.EtcdData} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Stop: %v, want it removed", d, err)
		}
	}
}

// helperEnv makes TestHelperControlPlane start a control plane of the
// release it names and wait to be killed, for TestKilledTestBinary.
const helperEnv = "KSA_CONTROLPLANE_TEST_HELPER"

// TestHelperControlPlane is run by TestKilledTestBinary in a process of its own.
func TestHelperControlPlane(t *testing.T) {
	version := os.Getenv(helperEnv)
	if version == "" {
		t.Skip("runs only as TestKilledTestBinary's child")
	}
	cp, err := controlplane.Start(t.Context(), controlplane.Config{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	pids := cp.PIDs()
	fmt.Printf("READY %d %d %s %s\n", pids[0], pids[1], cp.Files.Dir, cp.Files.EtcdData)
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
}

// TestKilledTestBinary kills (SIGKILL) a test binary with a running control
// plane and expects etcd and kube-apiserver to die with it.
func TestKilledTestBinary(t *testing.T) {
	controlplane.EachVersion(t, testKilledTestBinary)
}

func testKilledTestBinary(t *testing.T, version string) {
	controlplane.BinariesForTest(t, version)
	// Become the subreaper of the helper's children, so that once orphaned
	// they are this process's to reap rather than init's (which, in a
	// container, may never reap them).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperControlPlane$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+version)
	stdin, err := cmd.StdinPipe() // held open: the helper waits on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()

	var pids [2]int
	var dir, etcdDir, output string
	for s := bufio.NewScanner(stdout); s.Scan(); {
		output += s.Text() + "\n"
		if _, err := fmt.Sscanf(s.Text(), "READY %d %d %s %s", &pids[0], &pids[1], &dir, &etcdDir); err == nil {
			break
		}
	}
	if etcdDir == "" {
		_ = cmd.Wait()
		t.Fatalf("helper did not start a control plane:\n%s%s", output, stderr.String())
	}
	// The killed helper cannot remove its directories.
	defer os.RemoveAll(dir)
	defer os.RemoveAll(etcdDir)

	// Open the processes before killing the helper, so that their IDs cannot
	// be reused in between; a pidfd becomes readable when its process exits.
	var fds []unix.PollFd
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("pidfd_open(%d): %v", pid, err)
		}
		defer unix.Close(fd)
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for i, fd := range fds {
		n, err := unix.Poll([]unix.PollFd{fd}, 10_000)
		for errors.Is(err, unix.EINTR) {
			n, err = unix.Poll([]unix.PollFd{fd}, 10_000)
		}
		if err != nil || n != 1 {
			t.Errorf("process %d of the killed helper is still running 10 s later (poll: %d, %v)", pids[i], n, err)
			_ = unix.PidfdSendSignal(int(fd.Fd), unix.SIGKILL, nil, 0) // this test's to clean up
		}
		var status unix.WaitStatus
		if _, err := unix.Wait4(pids[i], &status, 0, nil); err != nil {
			t.Errorf("reaping process %d: %v", pids[i], err)
		} else if !status.Signaled() || status.Signal() != unix.SIGKILL {
			t.Errorf("process %d ended with status %v, want killed by SIGKILL", pids[i], status)
		}
	}
}

// selfSignedCA returns a new CA certificate.
func selfSignedCA(t *testing.T) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "other-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// readPublicKey reads a PEM "PUBLIC KEY" file.
func readPublicKey(t *testing.T, path string) crypto.PublicKey {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("%s holds no PUBLIC KEY block", path)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// readCerts reads every certificate of a PEM file.
func readCerts(t *testing.T, path string) []*x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var certs []*x509.Certificate
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, c)
	}
	return certs
}
