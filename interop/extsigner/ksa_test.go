package extsigner_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// The ksa command's signer, as an operator runs it: built from this
// checkout, started as a process of its own, killed by its process ID.

// buildKSA builds the command from this checkout (cmd/ksa, through its
// go.work) into a temporary directory and returns its path. A release
// whose control-plane binaries are missing skips (or fails, in CI) first,
// as every control-plane test does, before the command is built for
// nothing.
func buildKSA(t *testing.T, version string) string {
	t.Helper()
	if _, _, err := controlplane.Binaries(version); err != nil {
		controlplane.StartForTest(t, controlplane.Config{Version: version}) // skips, or fails in CI, saying why
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "ksa")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "cmd", "ksa")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building cmd/ksa: %s", out)
	return bin
}

// ksaSigner is "ksa signer serve" running as a process of its own.
type ksaSigner struct {
	t      *testing.T
	bin    string
	args   []string
	sock   string
	log    string
	cmd    *exec.Cmd
	done   chan struct{}
	client externaljwtv1.ExternalJWTSignerClient
}

// startKSASigner starts "ksa signer serve --socket sock args..." and
// returns once it answers on its socket; it is killed when the test ends.
func startKSASigner(t *testing.T, bin, sock string, args ...string) *ksaSigner {
	t.Helper()
	s := &ksaSigner{t: t, bin: bin, sock: sock, args: args, log: sock + ".log"}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	s.client = externaljwtv1.NewExternalJWTSignerClient(conn)
	s.start()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			if b, err := os.ReadFile(s.log); err == nil {
				t.Logf("ksa signer serve --socket %s logged:\n%s", sock, tail(string(b), 40))
			}
		}
	})
	return s
}

// start starts the process and waits until it answers Metadata.
func (s *ksaSigner) start() {
	s.t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(s.t, err)
	defer logf.Close()
	s.cmd = exec.Command(s.bin, append([]string{"signer", "serve", "--socket", s.sock}, s.args...)...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(s.t, startFromLockedThread(s.cmd))
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	ctx, cancel := context.WithTimeout(s.t.Context(), time.Minute)
	defer cancel()
	_, err = s.client.Metadata(ctx, &externaljwtv1.MetadataRequest{}, grpc.WaitForReady(true))
	require.NoError(s.t, err, "ksa signer serve did not answer")
}

// kill kills the process (SIGKILL, by its process ID) and waits for it:
// a signer that dies, socket file left behind.
func (s *ksaSigner) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// fetchKeys returns the signer's FetchKeys answer, and its bytes
// (deterministic protobuf).
func (s *ksaSigner) fetchKeys(ctx context.Context) (*externaljwtv1.FetchKeysResponse, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := s.client.FetchKeys(ctx, &externaljwtv1.FetchKeysRequest{})
	if err != nil {
		return nil, nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(resp)
	return resp, b, err
}

// starter is a goroutine locked to an OS thread it never releases: the
// kernel kills a child with Pdeathsig when the thread that started it
// ends (the test binary dying), and Go ends a thread only when a goroutine
// locked to it returns, so children started here die with the test binary
// and not before.
var starter struct {
	once sync.Once
	reqs chan func()
}

func startFromLockedThread(cmd *exec.Cmd) error {
	starter.once.Do(func() {
		starter.reqs = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range starter.reqs {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	starter.reqs <- func() { errc <- cmd.Start() }
	return <-errc
}

// writeKeyFile writes k's private key (PKCS #8 PEM) to dir/name.
func writeKeyFile(t *testing.T, dir, name string, k crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	return path
}

// writePublicFile writes a public key (PKIX PEM) to dir/name.
func writePublicFile(t *testing.T, dir, name string, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644))
	return path
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			lines++
			if lines > n {
				return s[i+1:]
			}
		}
	}
	return s
}
