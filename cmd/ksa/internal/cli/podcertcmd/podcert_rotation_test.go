package podcertcmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

// writeRotationCA writes a self-signed CA's key and certificate as
// dir/name.key and dir/name.crt; it returns the certificate's PEM and
// fingerprint.
func writeRotationCA(t *testing.T, dir, name string, notBefore time.Time) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notBefore.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o600))
	sum := sha256.Sum256(der)
	return string(certPEM), hex.EncodeToString(sum[:])
}

// serveOnce runs ksa podcert serve with args on cs until it has decided
// one request, and returns the log line of the decision and the metrics.
func serveOnce(t *testing.T, cs *fake.Clientset, args ...string) (decided, metrics string) {
	t.Helper()
	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	root := base.NewRoot(a, "", "", New(a, func(*rest.Config) (podcertctl.Client, error) { return clientgo.New(cs) }))
	root.SetArgs(append([]string{"podcert", "serve", "--api-version", "v1", "--ops-addr", "127.0.0.1:0"}, args...))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		logw.Close()
	}()
	var addr string
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
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	require.NotEmpty(t, addr)
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-done)
	return decided, string(body)
}

// TestPodcertServeRotation runs ksa podcert serve with a next CA at three
// times, with the same flags: before the next CA signs (both published,
// labelled, the current one signs), in the overlap (the next one signs,
// both published) and after the retirement (the next one alone).
func TestPodcertServeRotation(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	signsAt := start.Add(2 * time.Hour)
	dir := t.TempDir()
	curPEM, cur := writeRotationCA(t, dir, "ca", start.Add(-time.Hour))
	nextPEM, nxt := writeRotationCA(t, dir, "ca2", start.Add(-time.Hour))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	cs := fake.NewClientset()
	request := func(name string, at time.Time) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
		require.NoError(t, err)
		maxSeconds := int32(86400)
		_, err = cs.CertificatesV1().PodCertificateRequests("shop").Create(t.Context(), &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(at)},
			Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "cart-1", PodUID: "0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60",
				ServiceAccountName: "cart", ServiceAccountUID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60",
				NodeName: "node-1", NodeUID: "5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60",
				MaxExpirationSeconds: &maxSeconds, StubPKCS10Request: csr}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name    string
		at      time.Time
		signer  string
		bundle  string
		metrics []string
	}{
		{name: "before", at: start, signer: cur, bundle: curPEM + nextPEM, metrics: []string{
			`ksa_podcert_ca_info{fingerprint="` + cur + `",state="signing",subject="CN=ca"} 1`,
			`ksa_podcert_ca_info{fingerprint="` + nxt + `",state="next",subject="CN=ca2"} 1`}},
		{name: "overlap", at: signsAt.Add(time.Hour), signer: nxt, bundle: curPEM + nextPEM, metrics: []string{
			`ksa_podcert_ca_info{fingerprint="` + nxt + `",state="signing",subject="CN=ca2"} 1`,
			`ksa_podcert_ca_info{fingerprint="` + cur + `",state="retiring",subject="CN=ca"} 1`}},
		{name: "retired", at: signsAt.Add(24*time.Hour + 5*time.Minute), signer: nxt, bundle: nextPEM, metrics: []string{
			`ksa_podcert_ca_info{fingerprint="` + nxt + `",state="signing",subject="CN=ca2"} 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			request("req-"+tc.name, tc.at)
			decided, metrics := serveOnce(t, cs, "--now", tc.at.Format(time.RFC3339), "--signer-name", "example.com/pods",
				"--ca-key", filepath.Join(dir, "ca.key"), "--ca-cert", filepath.Join(dir, "ca.crt"), "--kubeconfig", kubeconfig,
				"--next-ca-key", filepath.Join(dir, "ca2.key"), "--next-ca-cert", filepath.Join(dir, "ca2.crt"),
				"--next-ca-signs-at", signsAt.Format(time.RFC3339))
			assert.Contains(t, decided, "name=req-"+tc.name)
			assert.Contains(t, decided, "ca="+tc.signer)
			for _, m := range tc.metrics {
				assert.Contains(t, metrics, m)
			}
			assert.Equal(t, len(tc.metrics), strings.Count(metrics, "ksa_podcert_ca_info{"))
			b, err := cs.CertificatesV1().ClusterTrustBundles().Get(t.Context(), "example.com:pods:primary-bundle", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.bundle, b.Spec.TrustBundle)
			assert.Equal(t, map[string]string{"ksa-go.github.io/canarying": "live", "ksa-go.github.io/trust-domain": "cluster.local"}, b.Labels)
		})
	}
}

// TestPodcertServeRefusesEarlyNextCA: a first start whose next CA would
// sign within --ca-propagation is refused in one line naming the fix, and
// publishes nothing; --ca-propagation lowers the minimum.
func TestPodcertServeRefusesEarlyNextCA(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	writeRotationCA(t, dir, "ca", now.Add(-time.Hour))
	writeRotationCA(t, dir, "ca2", now.Add(-time.Hour))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	cs := fake.NewClientset()
	var stderr bytes.Buffer
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr}
	root := base.NewRoot(a, "", "", New(a, func(*rest.Config) (podcertctl.Client, error) { return clientgo.New(cs) }))
	root.SetArgs([]string{"podcert", "serve", "--api-version", "v1", "--now", now.Format(time.RFC3339), "--kubeconfig", kubeconfig,
		"--signer-name", "example.com/pods", "--ca-key", filepath.Join(dir, "ca.key"), "--ca-cert", filepath.Join(dir, "ca.crt"),
		"--next-ca-key", filepath.Join(dir, "ca2.key"), "--next-ca-cert", filepath.Join(dir, "ca2.crt"),
		"--next-ca-signs-at", now.Add(30 * time.Minute).Format(time.RFC3339)})
	root.SilenceErrors, root.SilenceUsage = true, true
	err := root.ExecuteContext(t.Context())
	require.ErrorIs(t, err, podcertctl.ErrNextCANotPublished)
	assert.Equal(t, "starting the CA rotation: the next CA is not in the published trust bundle early enough: it signs at 2026-11-24T10:30:00Z, less than 1h0m0s from now, "+
		"and ClusterTrustBundle example.com:pods:primary-bundle does not hold it; "+
		"fix: give --next-ca-signs-at a time at least --ca-propagation (1h0m0s) from now: every pod must receive the next CA before it signs", err.Error())
	assert.Equal(t, 1, base.ExitCode(err))
	_, err = cs.CertificatesV1().ClusterTrustBundles().Get(t.Context(), "example.com:pods:primary-bundle", metav1.GetOptions{})
	require.Error(t, err, "nothing published")
}
