package cli

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

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/ksaprom"
)

// testKey is a key file of testdata/keys, by absolute path.
func testKey(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "keys", name))
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

// newTestWatcher returns the watcher of the ring file at path, with the
// ring it starts with, its log and its metrics, as "ksa signer serve
// --ring path --ring-check-interval interval" makes them.
func newTestWatcher(t *testing.T, path string, opener keystore.Opener, clk *testClock, interval time.Duration) (*ringWatcher, *bytes.Buffer, *prometheus.Registry) {
	t.Helper()
	var logBuf bytes.Buffer
	reg := prometheus.NewRegistry()
	metrics, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg})
	require.NoError(t, err)
	obs := &signerObserver{log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf}, nil)), metrics: metrics}
	w := newRingWatcher(path, opener, obs, clk.Now, interval)
	data, err := readRingFile(path)
	require.NoError(t, err)
	cfg, err := openRingFile(t.Context(), data, w.opener)
	require.NoError(t, err)
	cfg.Now = clk.Now
	w.ring, err = extsigner.NewRing(cfg)
	require.NoError(t, err)
	w.applied = data
	w.completed()
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

// TestRingWatcherCheck: check applies a changed ring file at once and
// whole; a file it refuses leaves the ring as it was, is logged once per
// error (and, unchanged, not tried again at once), and counts in the
// metrics; the file turning good again is applied.
func TestRingWatcherCheck(t *testing.T) {
	dir := t.TempDir()
	ec, rsa := testKey(t, "ec.key"), testKey(t, "rsa.key")
	path := filepath.Join(dir, "ring.json")
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }
	good := `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"}]}`
	write(good)
	clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	w, logBuf, reg := newTestWatcher(t, path, keystore.Files{}, clk, 10*time.Second)
	check := func() (bool, error) { return w.check(context.Background()) }

	changed, err := check()
	require.NoError(t, err)
	assert.False(t, changed, "the same file")

	withRSA := `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"},{"key":"` + rsa + `"}]}`
	write(withRSA)
	changed, err = check()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Len(t, w.ring.KeySet().Keys, 2)

	for _, bad := range []struct{ name, file, want string }{
		{"not YAML or JSON", "keys: [", "not YAML or JSON"},
		{"the signing key withdrawn", `{"keys":[{"key":"` + rsa + `","primary":"2026-01-01T00:00:00Z"}]}`, "cannot withdraw primary key"},
		{"a missing key", `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"},{"key":"/nonexistent.key"}]}`, "keys[1]: cannot open its key"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			logBuf.Reset()
			write(bad.file)
			for range 3 {
				changed, err := check()
				require.Error(t, err)
				assert.False(t, changed)
				clk.Add(time.Second)
			}
			assert.Len(t, w.ring.KeySet().Keys, 2, "the last good ring")
			assert.Equal(t, 1, strings.Count(logBuf.String(), "ring file refused"), "logged once: %s", logBuf.String())
			assert.Contains(t, logBuf.String(), bad.want)
		})
	}

	logBuf.Reset()
	write(withRSA)
	changed, err = check()
	require.NoError(t, err)
	assert.True(t, changed, "back to a good file")
	assert.Contains(t, logBuf.String(), "ring file reloaded")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_ring_reload_errors_total Ring files read again and refused: the last good ring stays.
# TYPE ksa_extsigner_ring_reload_errors_total counter
ksa_extsigner_ring_reload_errors_total 3
# HELP ksa_extsigner_ring_reload_failing 1 while the ring file's last reload was refused and the signer serves the last good ring, else 0.
# TYPE ksa_extsigner_ring_reload_failing gauge
ksa_extsigner_ring_reload_failing 0
# HELP ksa_extsigner_ring_reloads_total Ring files read again and applied.
# TYPE ksa_extsigner_ring_reloads_total counter
ksa_extsigner_ring_reloads_total 2
`), "ksa_extsigner_ring_reload_errors_total", "ksa_extsigner_ring_reload_failing", "ksa_extsigner_ring_reloads_total"))
}

// countingOpener opens file keys with keystore.Files and counts the opens
// of the other references, which fail with err (nil: they open key).
type countingOpener struct {
	mu    sync.Mutex
	opens int
	err   error
	key   crypto.Signer
}

func (o *countingOpener) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	if !strings.HasPrefix(ref, "pkcs11:") {
		return keystore.Files{}.Open(ctx, ref)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opens++
	if o.err != nil {
		return nil, o.err
	}
	return o.key, nil
}

func (o *countingOpener) set(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.err = err
}

func (o *countingOpener) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.opens
}

// TestRingWatcherRetries: a ring file refused because the key store
// refused the PIN is not tried again (each failed login counts toward
// locking the HSM's PIN) until the file or the PIN file changes; one
// refused for another reason is tried again after the interval, then
// after twice as long each time, up to five minutes; a schedule too early
// is tried again when it becomes safe.
func TestRingWatcherRetries(t *testing.T) {
	dir := t.TempDir()
	ec := testKey(t, "ec.key")
	pinFile := filepath.Join(dir, "pin")
	require.NoError(t, os.WriteFile(pinFile, []byte("1234\n"), 0o600))
	path := filepath.Join(dir, "ring.yaml")
	first := fmt.Sprintf("keys:\n- key: %s\n  primary: \"2026-01-01T00:00:00Z\"\n", ec)
	require.NoError(t, os.WriteFile(path, []byte(first), 0o600))
	hsmRef := "pkcs11:token=ksa;object=sa-2?pin-source=" + pinFile
	withHSM := first + "- key: \"" + hsmRef + "\"\n"
	hsmKey, err := keystore.LoadSigningKeyFile(testKey(t, "rsa.key"))
	require.NoError(t, err)
	const interval = 10 * time.Second

	t.Run("PIN refused", func(t *testing.T) {
		clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
		opener := &countingOpener{key: hsmKey, err: fmt.Errorf("%s: the token refused the PIN: CKR_PIN_INCORRECT: %w", hsmRef, keystore.ErrLoginRefused)}
		w, logBuf, _ := newTestWatcher(t, path, opener, clk, interval)
		t.Cleanup(func() { require.NoError(t, os.WriteFile(path, []byte(first), 0o600)) })
		replaceFile(t, path, withHSM)
		for range 9 * 6 { // 9 minutes of checks
			_, err := w.check(t.Context())
			require.ErrorIs(t, err, keystore.ErrLoginRefused)
			clk.Add(interval)
		}
		assert.Equal(t, 1, opener.count(), "one login in 9 minutes")
		assert.Equal(t, 1, strings.Count(logBuf.String(), "ring file refused"), logBuf.String())
		assert.Contains(t, logBuf.String(), "a key store refused the PIN: the ring file is not tried again until it or a PIN file it names changes")

		// The PIN file replaced: tried again, once.
		require.NoError(t, os.WriteFile(pinFile, []byte("4321\n"), 0o600))
		for range 3 {
			_, _ = w.check(t.Context())
			clk.Add(interval)
		}
		assert.Equal(t, 2, opener.count(), "the PIN file changed")
		// The ring file changed: tried again, once.
		replaceFile(t, path, withHSM+"# the PIN is fixed\n")
		for range 3 {
			_, _ = w.check(t.Context())
			clk.Add(interval)
		}
		assert.Equal(t, 3, opener.count(), "the ring file changed")
		// The PIN right at last.
		opener.set(nil)
		require.NoError(t, os.WriteFile(pinFile, []byte("1234\n"), 0o600))
		changed, err := w.check(t.Context())
		require.NoError(t, err)
		assert.True(t, changed)
		assert.Equal(t, 4, opener.count())
		assert.Len(t, w.ring.KeySet().Keys, 2)
		// Applied, the file is read again only for its own changes: a PIN
		// file replaced (the HSM's PIN changed) does not reopen its keys.
		require.NoError(t, os.WriteFile(pinFile, []byte("5678\n"), 0o600))
		changed, err = w.check(t.Context())
		require.NoError(t, err)
		assert.False(t, changed)
		assert.Equal(t, 4, opener.count())
	})

	t.Run("key store failing", func(t *testing.T) {
		clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
		opener := &countingOpener{key: hsmKey, err: fmt.Errorf("%s: the token cannot be opened: %w", hsmRef, keystore.ErrKeyStore)}
		w, _, _ := newTestWatcher(t, path, opener, clk, interval)
		t.Cleanup(func() { require.NoError(t, os.WriteFile(path, []byte(first), 0o600)) })
		replaceFile(t, path, withHSM)
		start := clk.Now()
		var tried []time.Duration
		for range 30 * 6 { // 30 minutes of checks
			before := opener.count()
			_, err := w.check(t.Context())
			require.ErrorIs(t, err, keystore.ErrKeyStore)
			if opener.count() > before {
				tried = append(tried, clk.Now().Sub(start))
			}
			clk.Add(interval)
		}
		s := time.Second
		assert.Equal(t, []time.Duration{0, 10 * s, 30 * s, 70 * s, 150 * s, 310 * s, 610 * s, 910 * s, 1210 * s, 1510 * s}, tried, "10 s, doubling up to 5 minutes")
		// Back: the next attempt applies it.
		opener.set(nil)
		clk.Add(5 * time.Minute)
		changed, err := w.check(t.Context())
		require.NoError(t, err)
		assert.True(t, changed)
	})

	t.Run("a schedule too early", func(t *testing.T) {
		clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
		opener := &countingOpener{key: hsmKey}
		w, _, _ := newTestWatcher(t, path, opener, clk, interval)
		t.Cleanup(func() { require.NoError(t, os.WriteFile(path, []byte(first), 0o600)) })
		// The HSM key is written as published long ago and signs now: the
		// ring publishes it only now, so it may sign in two minutes.
		replaceFile(t, path, fmt.Sprintf("keys:\n- key: %s\n  primary: \"2026-01-01T00:00:00Z\"\n  retired: \"2026-06-02T00:03:01Z\"\n- key: %q\n  published: \"2026-05-01T00:00:00Z\"\n  primary: \"2026-06-01T00:01:00Z\"\n", ec, hsmRef))
		start := clk.Now()
		var tried []time.Duration
		for range 3 * 6 {
			before := opener.count()
			_, err := w.check(t.Context())
			require.ErrorIs(t, err, extsigner.ErrTooEarly)
			if opener.count() > before {
				tried = append(tried, clk.Now().Sub(start))
			}
			clk.Add(interval)
		}
		assert.Equal(t, []time.Duration{0, 2 * time.Minute}, tried, "tried again when it was to become safe")
	})
}

// TestRingWatcherFIFO: a ring file that is a FIFO (no writer) is refused at
// once, at the start and at every check, never waited for; the checks go
// on, and /readyz says when they stop.
func TestRingWatcherFIFO(t *testing.T) {
	dir := t.TempDir()
	ec := testKey(t, "ec.key")
	path := filepath.Join(dir, "ring.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("keys:\n- key: %s\n  primary: \"2026-01-01T00:00:00Z\"\n", ec)), 0o600))
	clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	w, logBuf, reg := newTestWatcher(t, path, keystore.Files{}, clk, 10*time.Second)
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	// A bound on the wait, not an expectation: a check that blocks on the
	// FIFO never returns.
	bounded := func(name string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn()
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s blocked on the FIFO", name)
		}
	}
	bounded("starting", func() {
		var out bytes.Buffer
		code := Main([]string{"signer", "serve", "--socket", filepath.Join(dir, "s.sock"), "--ring", fifo}, strings.NewReader(""), &out, &out)
		assert.Equal(t, exitFailure, code)
		assert.Equal(t, "ksa: ring file "+fifo+" is not a regular file; fix: give --ring the path of a regular file (a ConfigMap's file, or one a rename replaces)", strings.TrimSpace(out.String()))
	})
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(fifo, path))
	clk.Add(10 * time.Second)
	bounded("checking", func() {
		_, err := w.check(t.Context())
		assert.ErrorIs(t, err, errNotRegular)
	})
	assert.Contains(t, logBuf.String(), "is not a regular file")
	assert.Len(t, w.ring.KeySet().Keys, 1, "the last good ring")

	// The check ended: it counts, for the metric and /readyz.
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_ring_last_check_timestamp_seconds When the ring file was last read and checked to the end (Unix time), whether it changed, was applied or refused; absent before the first check. A check that hangs (a hung network file system) leaves it behind.
# TYPE ksa_extsigner_ring_last_check_timestamp_seconds gauge
ksa_extsigner_ring_last_check_timestamp_seconds 1.78027201e+09
`), "ksa_extsigner_ring_last_check_timestamp_seconds"))
	assert.NoError(t, w.stalled())
	clk.Add(time.Minute)
	assert.NoError(t, w.stalled(), "a minute (three intervals, at least a minute) without a check")
	clk.Add(time.Second)
	err := w.stalled()
	require.Error(t, err, "more than a minute")
	assert.Equal(t, "ring file "+path+": no check has ended since 2026-06-01T00:00:10Z, 1m1s ago (checks every 10s)", err.Error())
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

// TestRingWatcherStallAfter: /readyz fails after three check intervals
// without a completed check, and never sooner than a minute.
func TestRingWatcherStallAfter(t *testing.T) {
	for _, tc := range []struct {
		interval, want time.Duration
	}{
		{interval: 10 * time.Millisecond, want: time.Minute},
		{interval: 10 * time.Second, want: time.Minute},
		{interval: 20 * time.Second, want: time.Minute},
		{interval: time.Minute, want: 3 * time.Minute},
	} {
		w := newRingWatcher("ring.yaml", keystore.Files{}, &signerObserver{}, time.Now, tc.interval)
		assert.Equal(t, tc.want, w.stallAfter(), "--ring-check-interval %v", tc.interval)
	}
}

// TestRingWatcherBackoff: the wait before an unchanged refused file is
// tried again doubles from the interval up to five minutes, or stays at
// the interval when that is longer.
func TestRingWatcherBackoff(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		want     []time.Duration // after 1, 2, ... failures
	}{
		{interval: 10 * time.Second, want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}},
		{interval: 4 * time.Minute, want: []time.Duration{4 * time.Minute, 5 * time.Minute, 5 * time.Minute}},
		{interval: 10 * time.Minute, want: []time.Duration{10 * time.Minute, 10 * time.Minute}},
	} {
		w := newRingWatcher("ring.yaml", keystore.Files{}, &signerObserver{}, time.Now, tc.interval)
		for i, want := range tc.want {
			w.failures = i + 1
			assert.Equal(t, want, w.backoff(), "--ring-check-interval %v, %d failures", tc.interval, w.failures)
		}
	}
}
