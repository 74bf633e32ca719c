package extsigner_test

import (
	"context"
	"fmt"
	"io"
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

	"github.com/ksa-go/ksa/extsigner"
)

// peerEnv names the socket a re-executed test binary connects to, as
// another user.
const peerEnv = "KSA_EXTSIGNER_TEST_PEER_ADDRESS"

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
			l, err := extsigner.Listen(extsigner.ListenConfig{Address: tc.address, Mode: 0o666, AllowedUIDs: tc.allowed, OnRefused: func(uid uint32, err error) {
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
