package extsigner_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
)

// peerEnv names the socket a re-executed test binary connects to, as
// another user; squatEnv the socket it binds first.
const (
	peerEnv  = "KSA_EXTSIGNER_TEST_PEER_ADDRESS"
	squatEnv = "KSA_EXTSIGNER_TEST_SQUAT_ADDRESS"
)

// nobody is the user and group the peer runs as.
const nobody = 65534

// TestListenOtherUID: a process running as another user is refused when
// AllowedUIDs leaves it out, and served when it names it, on a socket
// file (reachable by that user: directory 0755, socket 0666, so only the
// peer check can refuse it) and on an abstract socket. The peer is this
// test binary, run again as nobody.
func TestListenOtherUID(t *testing.T) {
	if addr := os.Getenv(peerEnv); addr != "" {
		peerMetadata(t, addr)
		return
	}
	if os.Getuid() != 0 {
		t.Skipf("running a peer as UID %d needs root; running as UID %d", nobody, os.Getuid())
	}
	dir, err := os.MkdirTemp("", "ksa-extsigner-uid")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := copyExecutable(t, dir)

	for _, tc := range []struct {
		name    string
		address string
		allowed []uint32
		refused bool
	}{
		{name: "socket file, peer not allowed", address: filepath.Join(dir, "refuse.sock"), allowed: []uint32{0}, refused: true},
		{name: "socket file, peer allowed", address: filepath.Join(dir, "allow.sock"), allowed: []uint32{0, nobody}},
		{name: "abstract, peer not allowed", address: abstractName(t), allowed: []uint32{0}, refused: true},
		{name: "abstract, peer allowed", address: abstractName(t), allowed: []uint32{nobody}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusals := make(chan uint32, 8)
			l, err := extsigner.Listen(extsigner.ListenConfig{Address: tc.address, Mode: 0o666, AllowedUIDs: tc.allowed, InsecureAbstractSocket: true, OnRefused: func(uid uint32, err error) {
				assert.NoError(t, err)
				refusals <- uid
			}})
			require.NoError(t, err)
			serveOn(t, l)

			code := runPeer(t, bin, dir, tc.address)
			if !tc.refused {
				assert.Equal(t, "OK", code)
				assert.Empty(t, refusals)
				return
			}
			assert.Equal(t, "Unavailable", code)
			select {
			case uid := <-refusals:
				assert.Equal(t, uint32(nobody), uid)
			case <-time.After(10 * time.Second):
				t.Fatal("no refusal reported")
			}
		})
	}
}

// copyExecutable copies the test binary into dir, where the peer's user
// can run it (the build directory is the owner's only).
func copyExecutable(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	in, err := os.Open(self)
	require.NoError(t, err)
	defer in.Close()
	bin := filepath.Join(dir, "extsigner.test")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	return bin
}

// runPeer runs bin as nobody, connecting to address, and returns the gRPC
// status code of its Metadata call.
func runPeer(t *testing.T, bin, dir, address string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestListenOtherUID$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), peerEnv+"="+address)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for line := range strings.Lines(string(out)) {
		if code, ok := strings.CutPrefix(strings.TrimSpace(line), "peer-code: "); ok {
			return code
		}
	}
	t.Fatalf("the peer reported no code:\n%s", out)
	return ""
}

// peerMetadata is the peer's side: it checks that it runs as nobody, asks
// for the signer's metadata and prints the status code.
func peerMetadata(t *testing.T, address string) {
	if os.Getuid() != nobody {
		fmt.Printf("peer-code: running as UID %d\n", os.Getuid())
		return
	}
	conn := dial(t, address)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := externaljwtv1.NewExternalJWTSignerClient(conn).Metadata(ctx, &externaljwtv1.MetadataRequest{})
	fmt.Printf("peer-code: %s\n", status.Code(err))
}

// TestListenTakeover: another user (nobody) binds the signer's address
// first, as it can while the signer is not listening (before it starts,
// while it restarts). An abstract name is refused without
// InsecureAbstractSocket, whether or not someone holds it; with it, the
// squatter keeps the name and would serve kube-apiserver. A socket file
// in a directory of root's, mode 0700, cannot be bound by the squatter,
// and the signer listens; in a directory anyone can write, the squatter
// binds it and Listen refuses the directory.
func TestListenTakeover(t *testing.T) {
	if addr := os.Getenv(squatEnv); addr != "" {
		squat(addr)
		return
	}
	if os.Getuid() != 0 {
		t.Skipf("running a squatter as UID %d needs root; running as UID %d", nobody, os.Getuid())
	}
	dir, err := os.MkdirTemp("", "ksa-extsigner-squat")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := copyExecutable(t, dir)
	private := filepath.Join(dir, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o777))

	t.Run("abstract", func(t *testing.T) {
		addr := abstractName(t)
		for _, held := range []bool{false, true} {
			if held {
				require.Equal(t, "bound", startSquatter(t, bin, dir, addr))
			}
			_, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, AllowedUIDs: []uint32{0}})
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce, "held: %v", held)
			assert.Equal(t, "extsigner.ListenConfig.Address", ce.Field)
			assert.Contains(t, ce.Reason, "abstract socket, which any local process can bind first")
		}
		// With the opt-in, the name stays the squatter's.
		_, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, AllowedUIDs: []uint32{0}, InsecureAbstractSocket: true})
		assert.ErrorIs(t, err, syscall.EADDRINUSE)
	})
	t.Run("socket file in a directory of root's", func(t *testing.T) {
		sock := filepath.Join(private, "signer.sock")
		got := startSquatter(t, bin, dir, sock)
		assert.Contains(t, got, "permission denied", "the squatter cannot bind it")
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock, AllowedUIDs: []uint32{0}})
		require.NoError(t, err)
		serveOn(t, l)
		require.NoError(t, metadata(t, sock))
	})
	t.Run("socket file in a directory anyone can write", func(t *testing.T) {
		sock := filepath.Join(shared, "signer.sock")
		require.Equal(t, "bound", startSquatter(t, bin, dir, sock))
		_, err := extsigner.Listen(extsigner.ListenConfig{Address: sock, AllowedUIDs: []uint32{0}})
		require.ErrorIs(t, err, extsigner.ErrSharedSocketDirectory)
		assert.Contains(t, err.Error(), "directory "+shared+" is writable by other users (mode 0777)")
	})
}

// startSquatter runs bin as nobody, binding address until the test ends,
// and returns what it reported: "bound", or why it could not bind.
func startSquatter(t *testing.T, bin, dir, address string) string {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestListenTakeover$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), squatEnv+"="+address)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
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

// squat is the squatter's side: it binds address (an abstract name, or a
// socket file) and holds it until its standard input ends.
func squat(address string) {
	if os.Getuid() != nobody {
		fmt.Printf("squat: running as UID %d\n", os.Getuid())
		return
	}
	l, err := net.Listen("unix", address)
	if err != nil {
		fmt.Printf("squat: %v\n", err)
		return
	}
	defer l.Close()
	fmt.Println("squat: bound")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
