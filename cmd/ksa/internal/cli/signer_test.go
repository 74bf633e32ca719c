package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
)

// signerPeerEnv names the socket a re-executed test binary calls as
// another user (TestMain runs signerPeer then).
const signerPeerEnv = "KSA_TEST_SIGNER_PEER"

// Exit statuses of signerPeer.
const (
	peerAnswered = 0
	peerRefused  = 3
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(signerPeerEnv); addr != "" {
		os.Exit(signerPeer(addr))
	}
	os.Exit(m.Run())
}

// signerPeer asks the signer at addr (a path, or @name for an abstract
// socket) for its metadata: exit peerAnswered when it answers,
// peerRefused when the connection is refused or closed.
func signerPeer(addr string) int {
	md, err := signerMetadata(context.Background(), addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "uid %d: %v\n", os.Getuid(), err)
		return peerRefused
	}
	fmt.Printf("uid %d: max token expiration %d\n", os.Getuid(), md.GetMaxTokenExpirationSeconds())
	return peerAnswered
}

// signerMetadata calls Metadata once, without waiting for a connection
// that the signer closes.
func signerMetadata(ctx context.Context, addr string) (*externaljwtv1.MetadataResponse, error) {
	target := "unix://" + addr
	if name, ok := strings.CutPrefix(addr, "@"); ok {
		target = "unix-abstract:" + name
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // a bound, not an expectation: a refusal fails at once
	defer cancel()
	return externaljwtv1.NewExternalJWTSignerClient(conn).Metadata(ctx, &externaljwtv1.MetadataRequest{})
}

// startSigner runs "ksa signer serve" with args until the test ends and
// returns once it listens, with the line it logged then; waitLog reads its
// log (standard error) until a line holds substr and returns that line,
// or "" when the log ends first.
func startSigner(t *testing.T, args ...string) (waitLog func(substr string) string, started string) {
	t.Helper()
	pr, pw := io.Pipe()
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: pw}
	root := newRoot(a)
	root.SetArgs(append([]string{"signer", "serve"}, args...))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		pw.Close()
	}()
	// Every line the signer logs is kept, so that its logging never waits
	// for the test; waitLog reads them in order from where it stopped.
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		kept   []string
		ended  bool
		cursor int
	)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			kept = append(kept, sc.Text())
			mu.Unlock()
			cond.Broadcast()
		}
		_, _ = io.Copy(io.Discard, pr)
		mu.Lock()
		ended = true
		mu.Unlock()
		cond.Broadcast()
	}()
	// A regression that never logs the line fails at the test's deadline
	// instead of hanging the run.
	if d, ok := t.Deadline(); ok {
		stop := time.AfterFunc(time.Until(d)-10*time.Second, func() {
			mu.Lock()
			ended = true
			mu.Unlock()
			cond.Broadcast()
		})
		t.Cleanup(func() { stop.Stop() })
	}
	// waitLog returns the next line holding substr, waiting for it (not
	// polling), or "" once the log has ended without it.
	waitLog = func(substr string) string {
		mu.Lock()
		defer mu.Unlock()
		for {
			for ; cursor < len(kept); cursor++ {
				if strings.Contains(kept[cursor], substr) {
					cursor++
					return kept[cursor-1]
				}
			}
			if ended {
				return ""
			}
			cond.Wait()
		}
	}
	started = waitLog("msg=serving ")
	require.NotEmpty(t, started, "the signer did not start")
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
		assert.NoError(t, a.keys.Close())
	})
	return waitLog, started
}

// TestSignerServeAllowedUIDs: on a path socket (its mode opened to all)
// and on an abstract socket (no file permissions at all), a process of
// another user is refused unless --allowed-uid names it; by default the
// signer's own UID and root are allowed; an explicit list replaces them.
func TestSignerServeAllowedUIDs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peer credentials (SO_PEERCRED) are read on Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root, to start a child process as uid 65534 (nobody) that connects as another user")
	}
	// A directory every user can enter, holding a copy of this test
	// binary that uid 65534 can run.
	dir, err := os.MkdirTemp("", "ksa-signer-peer-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin, err := os.ReadFile(self)
	require.NoError(t, err)
	peer := filepath.Join(dir, "peer.test")
	require.NoError(t, os.WriteFile(peer, bin, 0o755))
	keyFile, err := filepath.Abs("../../testdata/keys/ec.key")
	require.NoError(t, err)

	for _, tc := range []struct {
		name        string
		abstract    bool
		allowed     []string
		peerAllowed bool
		selfAllowed bool
	}{
		{name: "path socket, default", selfAllowed: true},
		{name: "abstract socket, default", abstract: true, selfAllowed: true},
		{name: "path socket, the peer allowed", allowed: []string{"65534", "0"}, peerAllowed: true, selfAllowed: true},
		{name: "abstract socket, the peer allowed", abstract: true, allowed: []string{"65534", "0"}, peerAllowed: true, selfAllowed: true},
		{name: "abstract socket, only the peer allowed", abstract: true, allowed: []string{"65534"}, peerAllowed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(dir, strconv.Itoa(len(tc.name))+"-"+strconv.FormatBool(tc.abstract)+".sock")
			if tc.abstract {
				sock = "@ksa-test-" + strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(tc.name, " ", "-")
			}
			args := []string{"--socket", sock, "--key", keyFile}
			for _, uid := range tc.allowed {
				args = append(args, "--allowed-uid", uid)
			}
			waitLog, _ := startSigner(t, args...)
			if !tc.abstract {
				require.NoError(t, os.Chmod(sock, 0o666), "the file mode no longer keeps anyone out")
			}

			_, err := signerMetadata(t.Context(), sock)
			if tc.selfAllowed {
				assert.NoError(t, err, "the signer's own user")
			} else {
				assert.Error(t, err, "the signer's own user is not in --allowed-uid")
			}

			cmd := exec.Command(peer, "-test.run=^$")
			cmd.Env = append(os.Environ(), signerPeerEnv+"="+sock)
			cmd.Dir = dir
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err, "%s", out)
			}
			if tc.peerAllowed {
				assert.Equal(t, peerAnswered, code, "uid 65534 is answered: %s", out)
			} else {
				assert.Equal(t, peerRefused, code, "uid 65534 is refused: %s", out)
				assert.NotEmpty(t, waitLog("refused a connection from uid 65534"), "the refusal is logged")
			}
		})
	}
}
