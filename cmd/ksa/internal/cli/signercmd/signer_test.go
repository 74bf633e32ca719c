package signercmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
)

// signerPeerEnv names the socket a re-executed test binary calls as
// another user (TestMain runs signerPeer then); signerSquatEnv the socket
// it binds first (signerSquat).
const (
	signerPeerEnv  = "KSA_TEST_SIGNER_PEER"
	signerSquatEnv = "KSA_TEST_SIGNER_SQUAT"
)

// Exit statuses of signerPeer.
const (
	peerAnswered = 0
	peerRefused  = 3
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(signerPeerEnv); addr != "" {
		os.Exit(signerPeer(addr))
	}
	if addr := os.Getenv(signerSquatEnv); addr != "" {
		os.Exit(signerSquat(addr))
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

// signerSquat binds addr (a path, or @name for an abstract socket) as a
// squatter would, says so on standard output ("squat: bound", or why not)
// and holds it until its standard input ends.
func signerSquat(addr string) int {
	l, err := net.Listen("unix", addr)
	if err != nil {
		fmt.Printf("squat: %v\n", err)
		return 0
	}
	defer l.Close()
	fmt.Println("squat: bound")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
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
	waitLog, started, _ = runSigner(t, args...)
	return waitLog, started
}

// runSigner is startSigner, and returns stop too: it stops the signer
// (SIGTERM's way) and waits until it has, once; its log can then be read
// to its end.
func runSigner(t *testing.T, args ...string) (waitLog func(substr string) string, started string, stop func()) {
	t.Helper()
	pr, pw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: pw}
	root := base.NewRoot(a, "", "", New(a))
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
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-done)
			assert.NoError(t, a.Keys.Close())
		})
	}
	t.Cleanup(stop)
	return waitLog, started, stop
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
	dir, peer := peerBinary(t)
	keyFile, err := filepath.Abs("../../../testdata/keys/ec.key")
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
			if tc.abstract {
				args = append(args, "--insecure-abstract-socket")
			}
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

// peerBinary makes a directory every user can enter (mode 0755) holding a
// copy of this test binary that uid 65534 can run.
func peerBinary(t *testing.T) (dir, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ksa-signer-peer-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	bin = filepath.Join(dir, "peer.test")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return dir, bin
}

// startSquatter runs bin as uid 65534, binding addr until the test ends,
// and returns what it reported: "bound", or why it could not bind.
func startSquatter(t *testing.T, dir, bin, addr string) string {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), signerSquatEnv+"="+addr)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close() // the squatter exits when its standard input ends
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if got, ok := strings.CutPrefix(sc.Text(), "squat: "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return got
		}
	}
	t.Fatal("the squatter reported nothing")
	return ""
}

// TestSignerServeTakeover: a local user (uid 65534) binds the signer's
// address first, as it can while the signer is not listening (before it
// starts, while it restarts). The signer refuses an abstract name unless
// --insecure-abstract-socket says so (with it, the name stays the
// squatter's: kube-apiserver would talk to it); the squatter cannot bind a
// socket file in a directory of root's, mode 0700, where the signer
// serves; and the signer refuses a directory anyone can write.
func TestSignerServeTakeover(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux's")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root, to start a squatter as uid 65534 (nobody)")
	}
	dir, bin := peerBinary(t)
	keyFile := testKey(t, "ec.key")
	private := filepath.Join(dir, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o777))
	serve := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := clitest.Main(New, append([]string{"signer", "serve", "--key", keyFile}, args...), strings.NewReader(""), &out, &out)
		return code, strings.TrimSpace(out.String())
	}

	t.Run("abstract name", func(t *testing.T) {
		name := "@ksa-test-squat-" + strconv.Itoa(os.Getpid())
		require.Equal(t, "bound", startSquatter(t, dir, bin, name))
		code, out := serve("--socket", name)
		assert.Equal(t, base.ExitUsage, code)
		assert.Equal(t, `ksa: --socket "`+name+`" is an abstract socket: any local user can bind the name while the signer is not listening and sign tokens in its place; fix: give --socket a file in a directory only root can write, e.g. --socket /run/ksa-signer/signer.sock after install -d -m 0700 /run/ksa-signer (--insecure-abstract-socket keeps the abstract name, at that risk)`, out)
		code, out = serve("--socket", name, "--insecure-abstract-socket")
		assert.NotEqual(t, base.ExitOK, code)
		assert.Contains(t, out, "address already in use", "the squatter keeps the name")
	})
	t.Run("socket file in a directory of root's", func(t *testing.T) {
		sock := filepath.Join(private, "signer.sock")
		assert.Contains(t, startSquatter(t, dir, bin, sock), "permission denied", "the squatter cannot bind it")
		startSigner(t, "--socket", sock, "--key", keyFile)
		_, err := signerMetadata(t.Context(), sock)
		assert.NoError(t, err)
	})
	t.Run("socket file in a directory anyone can write", func(t *testing.T) {
		sock := filepath.Join(shared, "signer.sock")
		require.Equal(t, "bound", startSquatter(t, dir, bin, sock))
		code, out := serve("--socket", sock)
		assert.Equal(t, base.ExitFailure, code)
		assert.Equal(t, `ksa: --socket "`+sock+`": directory `+shared+` is writable by other users (mode 0777): another user could bind the socket's name while the signer is not listening and sign tokens in its place; fix: put the socket in a directory only root can write, e.g. --socket /run/ksa-signer/signer.sock after install -d -o root -g root -m 0700 /run/ksa-signer (--insecure-shared-socket-directory where only trusted processes reach this one)`, out)
		code, out = serve("--socket", sock, "--insecure-shared-socket-directory")
		assert.NotEqual(t, base.ExitOK, code)
		assert.Contains(t, out, "is in use by a live listener", "the squatter keeps the name")
	})
}

// TestSignerServeRefusalsLogged: a local user who connects in a loop gets
// one log line, not one per connection: the first refusal is logged, the
// others counted (ksa_extsigner_refused_connections_total) and summed up in
// one line when the signer stops (or at the next refusal a minute later).
func TestSignerServeRefusalsLogged(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peer credentials (SO_PEERCRED) are read on Linux only")
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	// Every connection of this process is refused: its UID is not 4242.
	waitLog, started, stop := runSigner(t, "--socket", sock, "--key", testKey(t, "ec.key"), "--allowed-uid", "4242",
		"--now", "2026-06-01T00:00:00Z", "--ops-addr", "127.0.0.1:0")
	m := regexp.MustCompile(` ops=(\S+)`).FindStringSubmatch(started)
	require.Len(t, m, 2, started)
	const n = 500
	for range n + 1 {
		c, err := net.Dial("unix", sock)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, c) // until the signer closes it
		require.NoError(t, err)
		c.Close()
	}
	// The last connection was accepted once every one before it was
	// refused and reported.
	code, body := httpGet(t, "http://"+m[1]+"/metrics")
	require.Equal(t, http.StatusOK, code)
	assert.Regexp(t, `(?m)^ksa_extsigner_refused_connections_total (500|501)$`, body)
	stop()
	first := waitLog("refused a connection")
	assert.Contains(t, first, "refused a connection from uid "+strconv.Itoa(os.Getuid())+" (not an --allowed-uid); further refusals are logged at most once every 1m0s")
	assert.Contains(t, waitLog("more connections since"), "refused 500 more connections since 2026-06-01T00:00:00Z", "summed up when the signer stops")
	assert.Empty(t, waitLog("refused a connection"), "one line for %d refusals", n+1)
}
