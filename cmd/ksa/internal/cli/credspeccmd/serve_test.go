package credspeccmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// TestWebhookServe runs ksa webhook serve with a self-signed certificate:
// it answers probes, and its /mutate endpoint inlines the credential spec
// a pod names for a service account the --allow list lets use it.
func TestWebhookServe(t *testing.T) {
	client, url, stop := serveWebhook(t)
	defer stop()

	resp, err := client.Get(url + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)

	// /info: the version, as "ksa version -o json" prints it.
	resp, err = client.Get(url + "/info")
	require.NoError(t, err)
	var info base.VersionInfo
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, base.ReadVersion(debug.ReadBuildInfo), info)
	assert.NotEmpty(t, info.Version)

	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
	"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
	"operation":"CREATE","namespace":"web","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},
	"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"frontend-0","namespace":"web"},
	"spec":{"serviceAccountName":"frontend","securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"credspec-0"}},
	"containers":[{"name":"app","image":"app"}]}}}}`
	resp, err = client.Post(url+"/mutate", "application/json", strings.NewReader(review))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Response struct {
			UID     string `json:"uid"`
			Allowed bool   `json:"allowed"`
			Patch   []byte `json:"patch"`
		} `json:"response"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.Equal(t, "u-1", out.Response.UID)
	assert.True(t, out.Response.Allowed)
	assert.Contains(t, string(out.Response.Patch), "gmsaCredentialSpec", "the spec is inlined")
}

// serveWebhook starts ksa webhook serve with a self-signed certificate,
// the test credential spec and extra flags; it returns a client trusting
// the certificate, the server's URL and the function that stops it.
func serveWebhook(t *testing.T, extra ...string) (*http.Client, string, func()) {
	t.Helper()
	specs, err := filepath.Abs("../../../../../credspec/testdata/credspec-0.yml")
	require.NoError(t, err)
	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	root := base.NewRoot(a, "", "", NewWebhook(a))
	root.SetArgs(append([]string{"webhook", "serve", "--addr", "127.0.0.1:0", "--credspecs", specs,
		"--allow", "system:serviceaccount:web:frontend=credspec-0"}, extra...))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		logw.Close()
	}()

	// The log names the certificate file, then the address.
	var caFile, addr string
	lines := bufio.NewScanner(logs)
	for addr == "" && lines.Scan() {
		fields := strings.Fields(lines.Text())
		for _, f := range fields {
			if v, ok := strings.CutPrefix(f, "file="); ok {
				caFile = v
			}
			if v, ok := strings.CutPrefix(f, "addr="); ok {
				addr = v
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	require.NotEmpty(t, addr, "the log names the address")
	caPEM, err := os.ReadFile(caFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return client, "https://" + strings.Replace(addr, "127.0.0.1", "localhost", 1), func() {
		cancel()
		require.NoError(t, <-done)
	}
}
