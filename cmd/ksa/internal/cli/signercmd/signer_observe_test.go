package signercmd

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/ops"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/ksaprom"
)

// TestSignerReadiness: /readyz, which answers whoever reaches --ops-addr,
// says which check failed (the key store, the ring file) and nothing of
// the key store's module, token, key or PIN file; the detail is logged,
// once while it stays the same.
func TestSignerReadiness(t *testing.T) {
	key, err := keystore.LoadSigningKeyFile(testKey(t, "ec.key"))
	require.NoError(t, err)
	const ref = "pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa-prod;object=sa-1?pin-source=/etc/ksa/hsm-pin"
	hsm := extsigner.SignerFunc(key.Public(), func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) {
		return nil, fmt.Errorf("%s: the signature failed: CKR_DEVICE_ERROR", ref)
	})
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: hsm, Role: extsigner.RolePrimary}}})
	require.NoError(t, err)
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
	require.NoError(t, err)
	require.Error(t, srv.CheckHealth(t.Context()), "the probe failed")

	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf}, nil))
	var ringErr error
	ready := &signerReadiness{log: log, keyStore: srv.Ready, ringFile: func() error { return ringErr }}
	s, err := ops.Listen(ops.Config{Addr: "127.0.0.1:0", Ready: ready.check})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})

	for range 3 {
		code, body := httpGet(t, "http://"+s.Addr()+"/readyz")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, "not ready: the key store has not signed recently\n", body)
		for _, secret := range []string{"pkcs11", "softhsm", "ksa-prod", "sa-1", "hsm-pin", "CKR_"} {
			assert.NotContains(t, body, secret)
		}
	}
	logged := logBuf.String()
	assert.Equal(t, 1, strings.Count(logged, "not ready"), "logged once: %s", logged)
	assert.Contains(t, logged, "not ready: the key store has not signed recently")
	assert.Contains(t, logged, "token=ksa-prod", "the detail is in the log")
	assert.Contains(t, logged, "CKR_DEVICE_ERROR")

	// The key store answers again; the ring file is not being checked.
	ready.keyStore = func() error { return nil }
	ringErr = errors.New("ring file /etc/ksa/ring.yaml: no check has ended since 2026-06-01T00:00:10Z, 1m1s ago (checks every 10s)")
	code, body := httpGet(t, "http://"+s.Addr()+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: the ring file has not been checked recently\n", body)
	assert.Contains(t, logBuf.String(), "no check has ended since 2026-06-01T00:00:10Z")
	ringErr = nil
	code, body = httpGet(t, "http://"+s.Addr()+"/readyz")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, logBuf.String(), "msg=ready")
}

// TestRefusalLog: refused connections are logged the first at once, then
// at most once a minute with the number refused since; every one is
// counted.
func TestRefusalLog(t *testing.T) {
	clk := &testClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	var logBuf bytes.Buffer
	reg := prometheus.NewRegistry()
	metrics, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg})
	require.NoError(t, err)
	r := &refusalLog{log: slog.New(slog.NewTextHandler(&logBuf, nil)), now: clk.Now, metrics: metrics}
	lines := func() []string { return strings.Split(strings.TrimSpace(logBuf.String()), "\n") }

	for range 5000 {
		r.refused(65534, nil)
	}
	require.Len(t, lines(), 1)
	assert.Contains(t, lines()[0], `msg="refused a connection from uid 65534 (not an --allowed-uid); further refusals are logged at most once every 1m0s" uid=65534`)

	clk.Add(30 * time.Second)
	r.refused(65534, nil)
	assert.Len(t, lines(), 1, "within the minute")
	clk.Add(30 * time.Second)
	r.refused(1000, nil)
	require.Len(t, lines(), 2)
	assert.Contains(t, lines()[1], `msg="refused a connection from uid 1000 (not an --allowed-uid); 5000 more refused since 2026-06-01T00:00:00Z" uid=1000 unlogged=5000`)

	clk.Add(10 * time.Second)
	// An error of the library, whose package name the log leaves out.
	peerErr := &ksa.ConfigError{Field: "extsigner.ListenConfig.AllowedUIDs", Reason: "cannot be checked: reading the peer's credentials failed"}
	r.refused(0, peerErr)
	r.refused(0, peerErr)
	r.flush()
	require.Len(t, lines(), 3)
	assert.Contains(t, lines()[2], `msg="refused 2 more connections since 2026-06-01T00:01:10Z" unlogged=2`)
	r.flush()
	assert.Len(t, lines(), 3, "nothing more to say")
	clk.Add(time.Hour)
	r.refused(0, peerErr)
	require.Len(t, lines(), 4)
	assert.Contains(t, lines()[3], `msg="refused a connection: ListenConfig.AllowedUIDs cannot be checked: reading the peer's credentials failed; further refusals are logged at most once every 1m0s"`)

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_refused_connections_total Connections closed at once because the peer's user ID is not allowed (or could not be read).
# TYPE ksa_extsigner_refused_connections_total counter
ksa_extsigner_refused_connections_total 5005
`), "ksa_extsigner_refused_connections_total"))
}
