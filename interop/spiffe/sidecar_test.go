package spiffe

import (
	"bufio"
	"bytes"
	"context"
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

	gospiffe "github.com/spiffe/go-spiffe/v2/workloadapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
)

// TestSidecarSizeAndMemory builds the ksa command as released (no symbol
// table, no debug information, no paths of the build machine), runs
// "ksa spiffe serve" on a kubelet-written volume, connects 100 go-spiffe
// X509Sources, and rotates the certificate 500 times: every source gets
// every rotation, and the sidecar's resident memory after the last 300
// rotations is within 4 MiB of what it was after the first 200, once the
// runtime's heap has found its size (no growth per rotation). Run with -v
// for the figures.
func TestSidecarSizeAndMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and rotates 500 times")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the resident memory from /proc")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "ksa")
	build := exec.Command(goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..", "cmd", "ksa")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building cmd/ksa: %s", out)
	fi, err := os.Stat(bin)
	require.NoError(t, err)

	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	who := podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"}
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	publish := func(bundle []byte) {
		require.NoError(t, mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}))
	}
	first, err := ca.Issue(who)
	require.NoError(t, err)
	publish(first)
	addr := "unix://" + filepath.Join(t.TempDir(), "api.sock")
	sidecar := exec.Command(bin, "spiffe", "serve", "--credential-bundle", mount.Path("credentialbundle.pem"),
		"--trust-bundle", "cluster.local="+mount.Path("ca.pem"), "--socket", addr)
	var logs lockedBuffer
	sidecar.Stderr = &logs
	require.NoError(t, sidecar.Start())
	stopped := false
	defer func() {
		if !stopped {
			_ = sidecar.Process.Kill()
			_ = sidecar.Wait()
		}
	}()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a guard
	defer cancel()
	sources := make([]*gospiffe.X509Source, 100)
	for i := range sources {
		// NewX509Source waits for the socket and the first answer.
		sources[i], err = gospiffe.NewX509Source(ctx, gospiffe.WithClientOptions(gospiffe.WithAddr(addr)))
		require.NoError(t, err, "sidecar: %s", logs.String())
		defer sources[i].Close()
	}
	rss := func() int {
		t.Helper()
		f, err := os.Open("/proc/" + strconv.Itoa(sidecar.Process.Pid) + "/status")
		require.NoError(t, err)
		defer f.Close()
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			if v, ok := strings.CutPrefix(lines.Text(), "VmRSS:"); ok {
				kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				require.NoError(t, err)
				return kb << 10
			}
		}
		t.Fatal("no VmRSS in /proc/PID/status")
		return 0
	}
	connected := rss()
	bundles := make([][]byte, 500)
	for i := range bundles {
		bundles[i], err = ca.Issue(who)
		require.NoError(t, err)
	}
	var after200 int
	for i, b := range bundles {
		publish(b)
		var wg sync.WaitGroup
		for _, src := range sources {
			wg.Go(func() { assert.NoError(t, src.WaitUntilUpdated(ctx)) })
		}
		wg.Wait()
		if i == 199 {
			after200 = rss()
		}
	}
	after500 := rss()
	last, err := podcert.ParseBundle(bundles[len(bundles)-1])
	require.NoError(t, err)
	for _, src := range sources {
		svid, err := src.GetX509SVID()
		require.NoError(t, err)
		require.Equal(t, last.Certificate.Leaf.Raw, svid.Certificates[0].Raw, "every source holds the last certificate")
	}
	require.NoError(t, sidecar.Process.Signal(syscall.SIGTERM))
	require.NoError(t, sidecar.Wait(), "sidecar: %s", logs.String())
	stopped = true
	t.Logf("ksa (release build): %.1f MB; sidecar RSS with 100 clients: %.1f MiB connected, %.1f MiB after 200 rotations, %.1f MiB after 500",
		float64(fi.Size())/1e6, float64(connected)/(1<<20), float64(after200)/(1<<20), float64(after500)/(1<<20))
	assert.Less(t, after500-after200, 4<<20, "resident memory grows with rotations")
	assert.Contains(t, logs.String(), "stopped: 501 update(s) published")
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
