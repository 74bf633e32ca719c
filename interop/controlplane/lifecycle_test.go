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
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// TestBinaryMissing points each binary's variable at a path that does not
// exist and expects Start to say so, without starting anything.
func TestBinaryMissing(t *testing.T) {
	for _, tc := range []struct{ name, env string }{
		{controlplane.Etcd, controlplane.EnvEtcd},
		{controlplane.KubeAPIServer, controlplane.EnvKubeAPIServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "no-"+tc.name)
			t.Setenv(tc.env, missing)
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
			if bm.Name != tc.name || !slices.Equal(bm.Looked, []string{want}) || !strings.Contains(bm.Install, controlplane.InstallScript) {
				t.Errorf("error = %+v; want Name %s, Looked [%s], Install naming %s", bm, tc.name, want, controlplane.InstallScript)
			}
		})
	}
}

// TestStartErrorShowsLogs gives kube-apiserver a flag it does not know and
// expects a StartError that quotes its complaint.
func TestStartErrorShowsLogs(t *testing.T) {
	if _, _, err := controlplane.Binaries(); err != nil {
		if controlplane.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var output bytes.Buffer
	cp, err := controlplane.Start(t.Context(), controlplane.Config{
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

// TestStartForTestMissingBinary checks that a missing binary skips the test
// unless CI or KSA_REQUIRE_CONTROLPLANE asks for failure.
func TestStartForTestMissingBinary(t *testing.T) {
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
		t.Run(fmt.Sprintf("CI=%q,require=%q", tc.ci, tc.require), func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv(controlplane.EnvRequire, tc.require)
			t.Setenv(controlplane.EnvEtcd, filepath.Join(t.TempDir(), "no-etcd"))
			rec := &recordingTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				controlplane.StartForTest(rec, controlplane.Config{})
			}()
			<-done
			if rec.failed != tc.wantFail || rec.skipped == tc.wantFail {
				t.Errorf("failed = %v, skipped = %v; want failed = %v", rec.failed, rec.skipped, tc.wantFail)
			}
			if !strings.Contains(rec.msg, controlplane.InstallScript) {
				t.Errorf("message %q does not name %s", rec.msg, controlplane.InstallScript)
			}
		})
	}
}

// TestLifecycle starts a control plane with every key and CA option set,
// checks that kube-apiserver uses them, then stops it and checks that
// nothing is left.
func TestLifecycle(t *testing.T) {
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
		Issuers:            []string{"https://issuer.ksa.example", controlplane.DefaultIssuer},
		SigningKey:         signingKey,
		VerificationKeys:   []crypto.PublicKey{&oldKey.PublicKey},
		ClientCAs:          []*x509.Certificate{otherCA},
		AuthorizationModes: []string{"RBAC"},
	}

	start := time.Now()
	cp := controlplane.StartForTest(t, cfg)
	ready := time.Since(start)

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

// helperEnv makes TestHelperControlPlane start a control plane and wait to
// be killed, for TestKilledTestBinary.
const helperEnv = "KSA_CONTROLPLANE_TEST_HELPER"

// TestHelperControlPlane is run by TestKilledTestBinary in a process of its own.
func TestHelperControlPlane(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("runs only as TestKilledTestBinary's child")
	}
	cp, err := controlplane.Start(t.Context(), controlplane.Config{})
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
	if _, _, err := controlplane.Binaries(); err != nil {
		if controlplane.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// Become the subreaper of the helper's children, so that once orphaned
	// they are this process's to reap rather than init's (which, in a
	// container, may never reap them).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperControlPlane$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
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
