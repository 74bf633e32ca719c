package podcertcmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

// TestPodcertServeOps runs ksa podcert serve --ops-addr over a fake API
// server holding one request: once it is issued, /healthz and /readyz
// answer 200 and /metrics holds the decision, the trust bundle written and
// the age of the oldest undecided request (0 by the --now clock, the
// request's creation time).
func TestPodcertServeOps(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pods CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, caKey.Public(), caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))

	podKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, podKey)
	require.NoError(t, err)
	maxSeconds := int32(86400)
	pcr := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1", UID: "0c7d2a1e-7777-4c1e-9a7f-1b2c3d4e5f60", CreationTimestamp: metav1.NewTime(now)},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "cart-1", PodUID: "0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60",
			ServiceAccountName: "cart", ServiceAccountUID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60",
			NodeName: "node-1", NodeUID: types.UID("5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60"),
			MaxExpirationSeconds: &maxSeconds, StubPKCS10Request: csr}}
	cs := fake.NewClientset(pcr)

	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	root := base.NewRoot(a, "", "", New(a, func(*rest.Config) (podcertctl.Client, error) { return clientgo.New(cs) }))
	root.SetArgs([]string{"podcert", "serve", "--now", now.Format(time.RFC3339), "--signer-name", "example.com/pods",
		"--ca-key", filepath.Join(dir, "ca.key"), "--ca-cert", filepath.Join(dir, "ca.crt"), "--kubeconfig", kubeconfig,
		"--api-version", "v1", "--ops-addr", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		logw.Close()
	}()

	// The log names the ops address, then the request decided.
	var addr, decided string
	lines := bufio.NewScanner(logs)
	for decided == "" && lines.Scan() {
		line := lines.Text()
		if strings.Contains(line, "msg=decided") {
			decided = line
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "addr="); ok {
				addr = v
			}
		}
	}
	tail := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		tail <- b.String()
	}()
	require.NotEmpty(t, addr, "the log names the ops address")
	for _, attr := range []string{"namespace=shop", "name=req-1", "uid=" + string(pcr.UID), "outcome=Issued"} {
		assert.Contains(t, decided, attr)
	}

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, _ := get("/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, body := get("/readyz")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = get("/metrics")
	assert.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`ksa_podcert_requests_total{outcome="issued",reason="Issued"} 1`,
		`ksa_podcert_requests_total{outcome="denied",reason="UnsupportedKeyType"} 0`,
		`ksa_podcert_decision_duration_seconds_count{outcome="issued"} 1`,
		"ksa_podcert_trust_bundle_updates_total 1",
		"ksa_podcert_ca_key_errors_total 0",
		"ksa_podcert_oldest_undecided_request_seconds 0",
		"go_goroutines ", "process_start_time_seconds ",
	} {
		assert.Contains(t, body, want)
	}

	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, <-tail, "stopped: 1 issued, 0 denied, 0 failed")
}

// The controller's events reach the metrics, each to its own: N CA key
// failures are N on the counter.
func TestPodcertMetricsObserve(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	observe, err := newPodcertMetrics(reg, time.Now, func() time.Time { return time.Time{} }, func() []podcertctl.CAState { return nil }, func() bool { return false })
	require.NoError(t, err)
	for range 3 {
		observe(podcertctl.Event{Kind: podcertctl.CAKeyFailed, Retry: true})
	}
	observe(podcertctl.Event{Kind: podcertctl.Conflict})
	observe(podcertctl.Event{Kind: podcertctl.Errored})
	observe(podcertctl.Event{Kind: podcertctl.Skipped})
	observe(podcertctl.Event{Kind: podcertctl.TrustBundleWritten})
	observe(podcertctl.Event{Kind: podcertctl.CASwitchPostponed})
	observe(podcertctl.Event{Kind: podcertctl.CASwitchRecordCapped})
	observe(podcertctl.Event{Kind: podcertctl.CASwitchRecordCapped})
	observe(podcertctl.Event{Kind: podcertctl.Decided, Decision: &podcert.Decision{Outcome: podcert.Denied, Reason: podcert.ReasonUnsupportedKeyType}})
	want := `# HELP ksa_podcert_ca_switch_postponements_total Switches to the next CA postponed because the published trust bundle lacked it.
# TYPE ksa_podcert_ca_switch_postponements_total counter
ksa_podcert_ca_switch_postponements_total 1
# HELP ksa_podcert_ca_switch_records_capped_total Switch records of the published trust bundle later than the rotation allows, capped at the latest safe switch.
# TYPE ksa_podcert_ca_switch_records_capped_total counter
ksa_podcert_ca_switch_records_capped_total 2
# HELP ksa_podcert_ca_key_errors_total Signatures the CA key failed to make, for certificates or probes; the requests are tried again.
# TYPE ksa_podcert_ca_key_errors_total counter
ksa_podcert_ca_key_errors_total 3
# HELP ksa_podcert_status_update_conflicts_total Status writes the API server refused because the request had changed; the request is read again.
# TYPE ksa_podcert_status_update_conflicts_total counter
ksa_podcert_status_update_conflicts_total 1
# HELP ksa_podcert_status_update_errors_total Statuses that could not be written for another reason: refused by the API server or by the signer's own check, or no answer.
# TYPE ksa_podcert_status_update_errors_total counter
ksa_podcert_status_update_errors_total 1
# HELP ksa_podcert_trust_bundle_updates_total Writes of the signer's ClusterTrustBundle: created, or updated to the CA's certificates.
# TYPE ksa_podcert_trust_bundle_updates_total counter
ksa_podcert_trust_bundle_updates_total 1
# HELP ksa_podcert_requests_total PodCertificateRequests decided, by outcome (issued, denied, failed) and the reason of the condition written.
# TYPE ksa_podcert_requests_total counter
ksa_podcert_requests_total{outcome="denied",reason="InvalidUnverifiedUserAnnotations"} 0
ksa_podcert_requests_total{outcome="denied",reason="UnsupportedKeyType"} 1
ksa_podcert_requests_total{outcome="failed",reason="CAUnavailable"} 0
ksa_podcert_requests_total{outcome="failed",reason="InvalidRequest"} 0
ksa_podcert_requests_total{outcome="issued",reason="Issued"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "ksa_podcert_ca_switch_postponements_total", "ksa_podcert_ca_switch_records_capped_total", "ksa_podcert_ca_key_errors_total",
		"ksa_podcert_status_update_conflicts_total", "ksa_podcert_status_update_errors_total", "ksa_podcert_trust_bundle_updates_total",
		"ksa_podcert_requests_total"))
}

// The help of ksa podcert serve names every metric --ops-addr serves.
func TestPodcertServeHelpNamesMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	observe, err := newPodcertMetrics(reg, time.Now, func() time.Time { return time.Time{} },
		func() []podcertctl.CAState {
			return []podcertctl.CAState{{Fingerprint: "ab", Subject: "CN=pods CA", State: podcertctl.CASigning}}
		}, func() bool { return true })
	require.NoError(t, err)
	observe(podcertctl.Event{Kind: podcertctl.Decided, Decision: &podcert.Decision{Outcome: podcert.Issued, Reason: podcert.ReasonIssued}})
	families, err := reg.Gather()
	require.NoError(t, err)
	help := newPodcertServeCmd(&base.App{}, nil).Long
	n := 0
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "ksa_") {
			n++
			assert.Contains(t, help, f.GetName())
		}
	}
	assert.Equal(t, 11, n)
}
