package spiffecmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// TestSpiffeServe runs ksa spiffe serve as a sidecar meets it: the
// kubelet's volume, a workload's stream over the socket that receives the
// certificate and then its refresh, the credential folder, the probes and
// metrics, and a clean stop.
func TestSpiffeServe(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	refresh := func() *x509.Certificate {
		bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
		require.NoError(t, err)
		require.NoError(t, mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}))
		cred, err := podcert.ParseBundle(bundle)
		require.NoError(t, err)
		return cred.Certificate.Leaf
	}
	first := refresh()
	sock := filepath.Join(t.TempDir(), "api.sock")
	folder := t.TempDir()
	t.Setenv(workloadapi.EndpointSocketEnv, "unix://"+sock)
	t.Setenv(workloadapi.CredentialFolderEnv, folder)

	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	root := base.NewRoot(a, "", "", New(a))
	root.SetArgs([]string{"spiffe", "serve", "--credential-bundle", mount.Path("credentialbundle.pem"),
		"--trust-bundle", "cluster.local=" + mount.Path("ca.pem"), "--ops-addr", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		logw.Close()
	}()
	var addr string
	lines := bufio.NewScanner(logs)
	var log strings.Builder
	for addr == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		for _, f := range strings.Fields(lines.Text()) {
			if v, ok := strings.CutPrefix(f, "addr="); ok {
				addr = v
			}
		}
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(logs)
		rest <- string(b)
	}()
	require.NotEmpty(t, addr, "the log names the ops address: %s", log.String())
	assert.Contains(t, log.String(), "spiffe_id=spiffe://cluster.local/ns/shop/sa/cart")

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := workload.NewSpiffeWorkloadAPIClient(conn).FetchX509SVID(
		metadata.AppendToOutgoingContext(t.Context(), workloadapi.SecurityHeader, "true"), &workload.X509SVIDRequest{}, grpc.WaitForReady(true))
	require.NoError(t, err)
	recv := func() *x509.Certificate {
		resp, err := stream.Recv()
		require.NoError(t, err)
		certs, err := x509.ParseCertificates(resp.Svids[0].X509Svid)
		require.NoError(t, err)
		return certs[0]
	}
	assert.Equal(t, first.Raw, recv().Raw)
	next := refresh()
	assert.Equal(t, next.Raw, recv().Raw, "the kubelet's refresh reaches the stream")
	_, err = os.Stat(filepath.Join(folder, workloadapi.CredentialFileName))
	require.NoError(t, err, "the credential folder of $SPIFFE_CREDENTIAL_FOLDER")

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, _ := get("/readyz")
	assert.Equal(t, http.StatusOK, code)
	code, metrics := get("/metrics")
	assert.Equal(t, http.StatusOK, code)
	for _, m := range []string{"ksa_spiffe_clients 1", "ksa_spiffe_updates_total 2", "ksa_spiffe_updates_pushed_total 2",
		"ksa_spiffe_bundle_load_errors_total 0", "ksa_spiffe_certificate_expiry_timestamp_seconds "} {
		assert.Contains(t, metrics, m)
	}

	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, <-rest, "stopped: 2 update(s) published, 2 answer(s) pushed, 0 error(s)")
}

// TestSpiffeServeSaysWhatItWaitsFor: a pod certificate of a trust domain
// no --trust-bundle names is not served, and the log says so (what is
// wrong, and that no SVID is served until it is right), never "serving"
// an empty identity.
func TestSpiffeServeSaysWhatItWaitsFor(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
	require.NoError(t, err)
	require.NoError(t, mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}))

	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	root := base.NewRoot(a, "", "", New(a))
	root.SetArgs([]string{"spiffe", "serve", "--credential-bundle", mount.Path("credentialbundle.pem"),
		"--trust-bundle", "partner.example=" + mount.Path("ca.pem"), "--socket", filepath.Join(t.TempDir(), "api.sock")})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		logw.Close()
	}()
	// The first update is made before the socket listens.
	var log strings.Builder
	lines := bufio.NewScanner(logs)
	for lines.Scan() && !strings.Contains(lines.Text(), "msg=listening") {
		log.WriteString(lines.Text() + "\n")
	}
	go io.Copy(io.Discard, logs) //nolint:errcheck // the rest of the log
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, log.String(), "no trust bundle of trust domain cluster.local", "what is wrong")
	assert.Contains(t, log.String(), `level=WARN msg="no X509-SVID to serve yet: waiting for a credential bundle that loads and that the trust bundle of its own trust domain verifies`)
	assert.NotContains(t, log.String(), "msg=serving", "nothing claims to serve")
}
