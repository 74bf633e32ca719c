package signercmd

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/ksaprom"
)

// testKey is a key file of testdata/keys, by absolute path.
func testKey(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "keys", name))
	require.NoError(t, err)
	return p
}

// kidOfFile is Kubernetes' key ID of the first key of a PEM file.
func kidOfFile(t *testing.T, path string) string {
	t.Helper()
	pubs, err := keystore.LoadPublicKeysFile(path)
	require.NoError(t, err)
	kid, err := jwks.KeyID(pubs[0])
	require.NoError(t, err)
	return kid
}

// signerConn connects to the signer at a socket path as kube-apiserver
// does.
func signerConn(t *testing.T, sock string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func fetchKIDs(t *testing.T, c externaljwtv1.ExternalJWTSignerClient) (kids []string, excluded []bool, stamp time.Time) {
	t.Helper()
	resp, err := c.FetchKeys(t.Context(), &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	for _, k := range resp.Keys {
		kids = append(kids, k.KeyId)
		excluded = append(excluded, k.ExcludeFromOidcDiscovery)
	}
	return kids, excluded, resp.DataTimestamp.AsTime()
}

// signClaims asks for a signature of claims expiring in an hour and
// returns the kid that signed.
func signClaims(t *testing.T, c externaljwtv1.ExternalJWTSignerClient) (string, error) {
	t.Helper()
	claims := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"exp":%d,"sub":"system:serviceaccount:a:b","jti":"j-1"}`, time.Now().Add(time.Hour).Unix())))
	resp, err := c.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: claims})
	if err != nil {
		return "", err
	}
	h, err := base64.RawURLEncoding.DecodeString(resp.Header)
	require.NoError(t, err)
	m := regexp.MustCompile(`"kid":"([^"]+)"`).FindStringSubmatch(string(h))
	require.Len(t, m, 2)
	return m[1], nil
}

// replaceFile replaces path with content in one rename, as a ConfigMap
// update or an editor does: the signer polling the file never reads it
// half written.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestSignerServeRingFile: the signer serves a YAML ring file, reloads it
// when it changes (a key added), keeps the last good ring when the file
// turns bad (and says so in its log and metrics), and serves health and
// metrics on --ops-addr.
func TestSignerServeRingFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "ksa-ring-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ec, rsa := testKey(t, "ec.key"), testKey(t, "rsa.key")
	ring := filepath.Join(dir, "ring.yaml")
	first := fmt.Sprintf("maxTokenLifetime: 1h\nkeys:\n- key: %s\n  primary: \"2026-01-01T00:00:00Z\"\n", ec)
	require.NoError(t, os.WriteFile(ring, []byte(first), 0o600))
	waitLog, started := startSigner(t, "--socket", sock, "--ring", ring, "--ring-check-interval", "10ms", "--ops-addr", "127.0.0.1:0")
	m := regexp.MustCompile(` ops=(\S+)`).FindStringSubmatch(started)
	require.Len(t, m, 2, started)
	ops := "http://" + m[1]
	conn := signerConn(t, sock)
	client := externaljwtv1.NewExternalJWTSignerClient(conn)

	md, err := client.Metadata(t.Context(), &externaljwtv1.MetadataRequest{})
	require.NoError(t, err)
	assert.Equal(t, int64(3600), md.MaxTokenExpirationSeconds, "the ring file's lifetime")
	kids, _, stamp := fetchKIDs(t, client)
	assert.Equal(t, []string{kidOfFile(t, ec)}, kids)
	assert.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), stamp, "from the ring file")
	kid, err := signClaims(t, client)
	require.NoError(t, err)
	assert.Equal(t, kidOfFile(t, ec), kid)

	// A key added: published, not signing.
	second := first + fmt.Sprintf("- key: %s\n  published: \"2026-02-01T00:00:00Z\"\n", rsa)
	replaceFile(t, ring, second)
	require.NotEmpty(t, waitLog("ring file reloaded"))
	kids, _, stamp = fetchKIDs(t, client)
	assert.Equal(t, []string{kidOfFile(t, ec), kidOfFile(t, rsa)}, kids)
	assert.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), stamp)

	// A bad file: refused, logged, the last good ring stays.
	replaceFile(t, ring, second+"  retired: \"2026-02-02T00:00:00Z\"\n- publicKeys: /nonexistent\n  pin: 1234\n")
	line := waitLog("ring file refused")
	require.NotEmpty(t, line)
	assert.Contains(t, line, "keys[2].pin: is not a member of a key entry")
	assert.NotContains(t, line, "1234", "values are not echoed")
	kids, _, _ = fetchKIDs(t, client)
	assert.Len(t, kids, 2, "the last good ring")
	kid, err = signClaims(t, client)
	require.NoError(t, err)
	assert.Equal(t, kidOfFile(t, ec), kid)

	// Health (the gRPC health service on the socket, /readyz: a probe
	// signed at the start) and metrics.
	hc, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, hc.Status)
	code, body := httpGet(t, ops+"/healthz")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = httpGet(t, ops+"/readyz")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = httpGet(t, ops+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`ksa_extsigner_ring_reload_failing 1`,
		`ksa_extsigner_ring_reloads_total 1`,
		`ksa_extsigner_sign_requests_total{code="OK",kid="` + kidOfFile(t, ec) + `"} 2`,
		`ksa_extsigner_data_timestamp_seconds 1.769904e+09`,
		`ksa_extsigner_keys{role="staged"} 1`,
		`ksa_extsigner_request_duration_seconds_count{code="OK",method="FetchKeys"} 3`,
		`process_cpu_seconds_total`,
	} {
		assert.True(t, strings.Contains(body, want), "/metrics shows %s", want)
	}
	assert.Regexp(t, `ksa_extsigner_ring_reload_errors_total [1-9]`, body)
}

// testClock is a clock a test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newTestWatcher returns the watcher of the ring file at path, its log
// and its metrics, as "ksa signer serve --ring path --ring-check-interval
// interval" makes them.
func newTestWatcher(t *testing.T, path string, opener keystore.Opener, clk *testClock, interval time.Duration) (*extsigner.RingFileWatcher, *bytes.Buffer, *prometheus.Registry) {
	t.Helper()
	var logBuf bytes.Buffer
	reg := prometheus.NewRegistry()
	metrics, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg})
	require.NoError(t, err)
	obs := &signerObserver{log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf}, nil)), metrics: metrics}
	w, err := extsigner.NewRingFileWatcher(t.Context(), obs.ringFileWatcherConfig(path, opener, clk.Now, interval))
	require.NoError(t, err)
	return w, &logBuf, reg
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestSignerRingFileObserved: the ring file's watcher (extsigner's, its
// rules tested there) as the command wires it: a YAML file applied and
// logged, a file refused logged once per error (a file that cannot be
// read in the flags' words) and counted, a key store that refused the PIN
// not tried again and said so, every check counted.
func TestSignerRingFileObserved(t *testing.T) {
	dir := t.TempDir()
	ec, rsa := testKey(t, "ec.key"), testKey(t, "rsa.key")
	path := filepath.Join(dir, "ring.yaml")
	good := fmt.Sprintf("keys:\n- key: %s\n  primary: \"2026-01-01T00:00:00Z\"\n", ec)
	replaceFile(t, path, good)
	clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	pinErr := fmt.Errorf("pkcs11:token=ksa: the token refused the PIN: CKR_PIN_INCORRECT: %w", keystore.ErrLoginRefused)
	w, logBuf, reg := newTestWatcher(t, path, keystore.OpenerFunc(func(ctx context.Context, ref string) (crypto.Signer, error) {
		if strings.HasPrefix(ref, "pkcs11:") {
			return nil, pinErr
		}
		return keystore.Files{}.Open(ctx, ref)
	}), clk, 10*time.Second)
	check := func() error {
		clk.Add(10 * time.Second)
		_, err := w.Check(t.Context())
		return err
	}

	replaceFile(t, path, good+fmt.Sprintf("- key: %s\n", rsa))
	require.NoError(t, check())
	assert.Regexp(t, `"ring file reloaded" file=\S+ring.yaml primary=\S+ keys=".+ \(primary\), .+ \(staged\)"`, logBuf.String())

	for _, bad := range []struct{ name, file, want string }{
		{"not YAML or JSON", "keys: [", "not YAML or JSON"},
		{"a missing key", good + "- key: /nonexistent.key\n", "keys[1]: cannot open its key"},
		{"a PIN refused", good + "- key: \"pkcs11:token=ksa;object=k\"\n", "a key store refused the PIN: the ring file is not tried again until it or a PIN file it names changes"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			logBuf.Reset()
			replaceFile(t, path, bad.file)
			for range 3 {
				require.Error(t, check())
			}
			assert.Equal(t, 1, strings.Count(logBuf.String(), "ring file refused"), "logged once: %s", logBuf.String())
			assert.Contains(t, logBuf.String(), bad.want)
			assert.Len(t, w.Ring().KeySet().Keys, 2, "the last good ring")
		})
	}

	// A file that cannot be read, in the flags' words.
	logBuf.Reset()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(fifo, path))
	require.Error(t, check())
	assert.Contains(t, logBuf.String(), "ring file "+path+" is not a regular file; fix: give --ring the path of a regular file")
	require.NoError(t, os.Remove(path))
	replaceFile(t, path, good+fmt.Sprintf("- key: %s\n", rsa))
	require.NoError(t, check())

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_ring_last_check_timestamp_seconds When the ring file was last read and checked to the end (Unix time), whether it changed, was applied or refused; absent before the first check. A check that hangs (a hung network file system) leaves it behind.
# TYPE ksa_extsigner_ring_last_check_timestamp_seconds gauge
ksa_extsigner_ring_last_check_timestamp_seconds 1.78027212e+09
# HELP ksa_extsigner_ring_reload_errors_total Ring files read again and refused: the last good ring stays.
# TYPE ksa_extsigner_ring_reload_errors_total counter
ksa_extsigner_ring_reload_errors_total 6
# HELP ksa_extsigner_ring_reload_failing 1 while the ring file's last reload was refused and the signer serves the last good ring, else 0.
# TYPE ksa_extsigner_ring_reload_failing gauge
ksa_extsigner_ring_reload_failing 0
# HELP ksa_extsigner_ring_reloads_total Ring files read again and applied.
# TYPE ksa_extsigner_ring_reloads_total counter
ksa_extsigner_ring_reloads_total 2
`), "ksa_extsigner_ring_last_check_timestamp_seconds", "ksa_extsigner_ring_reload_errors_total", "ksa_extsigner_ring_reload_failing", "ksa_extsigner_ring_reloads_total"))
}

// TestSignerRingFileFIFO: a ring file that is a FIFO (no writer) is
// refused at once when the signer starts, never waited for.
func TestSignerRingFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	// A bound on the wait, not an expectation: a start that blocks on the
	// FIFO never returns.
	done := make(chan struct{})
	go func() {
		defer close(done)
		var out bytes.Buffer
		code := clitest.Main(New, []string{"signer", "serve", "--socket", filepath.Join(dir, "s.sock"), "--ring", fifo}, strings.NewReader(""), &out, &out)
		assert.Equal(t, base.ExitFailure, code)
		assert.Equal(t, "ksa: ring file "+fifo+" is not a regular file; fix: give --ring the path of a regular file (a ConfigMap's file, or one a rename replaces)", strings.TrimSpace(out.String()))
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("starting blocked on the FIFO")
	}
}

// TestSignerServePreviousPublicKey: moving from key files, the public key
// kube-apiserver verified with before is published for it alone
// (excluded from discovery), beside a previous key published for
// everyone; the data timestamp is the same on every replica.
func TestSignerServePreviousPublicKey(t *testing.T) {
	dir, err := os.MkdirTemp("", "ksa-prev-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	rsa2, ec, rsaPub := testKey(t, "rsa2.key"), testKey(t, "ec.key"), testKey(t, "rsa.pub")
	startSigner(t, "--socket", sock, "--key", rsa2, "--previous-key", ec, "--previous-public-key", rsaPub)
	client := externaljwtv1.NewExternalJWTSignerClient(signerConn(t, sock))
	kids, excluded, stamp := fetchKIDs(t, client)
	assert.Equal(t, []string{kidOfFile(t, rsa2), kidOfFile(t, ec), kidOfFile(t, rsaPub)}, kids)
	assert.Equal(t, []bool{false, false, true}, excluded)
	assert.Equal(t, time.Unix(0, 0).UTC(), stamp, "no time in the flags: the Unix epoch")
	kid, err := signClaims(t, client)
	require.NoError(t, err)
	assert.Equal(t, kidOfFile(t, rsa2), kid)
}
