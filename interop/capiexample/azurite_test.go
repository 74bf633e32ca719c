package capiexample

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/skipmark"
)

// Azurite's well-known development account (published by Microsoft; no
// secret), and how the emulator is installed.
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	azuriteInstall = "npm install -g azurite@3.37.0"
)

// azurite is a running azurite-blob.
type azurite struct {
	// url is its blob endpoint, http://127.0.0.1:PORT.
	url string
}

// azuriteListens is the line azurite-blob prints once it serves.
var azuriteListens = regexp.MustCompile(`successfully listens on (http://\S+)`)

// startAzurite runs azurite-blob ($KSA_AZURITE_BLOB, or found on PATH) on
// a free loopback port, in memory, until the test ends. Without it the
// test is skipped with the line the test runner counts, or fails when CI
// is set.
func startAzurite(t *testing.T) *azurite {
	t.Helper()
	bin := os.Getenv("KSA_AZURITE_BLOB")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("azurite-blob"); err != nil {
			mark := skipmark.Skip{Subject: "Azurite", Missing: []string{"azurite-blob"}, Install: azuriteInstall}
			if os.Getenv("CI") != "" {
				t.Fatalf("%s (failing rather than skipping: CI is set)", mark)
			}
			t.Skip(mark.String())
		}
	}
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence",
		"--skipApiVersionCheck", "--disableTelemetry")
	cmd.Dir = t.TempDir()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	lines := make(chan []string, 1)
	go func() {
		var seen []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if m := azuriteListens.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				_, _ = io.Copy(io.Discard, out) // keep reading until it exits
				return
			}
		}
		lines <- seen
	}()
	// A guard against a hung emulator, not a measure.
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	select {
	case u := <-found:
		return &azurite{url: u}
	case seen := <-lines:
		t.Fatalf("azurite-blob exited before it listened:\n%s", strings.Join(seen, "\n"))
	case <-guard.C:
		t.Fatal("azurite-blob did not listen within a minute")
	}
	return nil
}

// connectionString is the account's, as AZURE_STORAGE_CONNECTION_STRING
// holds it.
func (a *azurite) connectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + azuriteAccount + ";AccountKey=" + azuriteKey +
		";BlobEndpoint=" + a.url + "/" + azuriteAccount + ";"
}

// publicContainer creates a container anonymous readers may read blobs
// of, as an issuer's container is.
func (a *azurite) publicContainer(t *testing.T, name string) {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString(a.connectionString(), nil)
	require.NoError(t, err)
	access := container.PublicAccessTypeBlob
	_, err = c.CreateContainer(t.Context(), name, &azblob.CreateContainerOptions{Access: &access})
	require.NoError(t, err)
}

// front serves a container's blobs over https as an anonymous reader gets
// them (the body, Content-Type and Cache-Control), as a custom domain or
// CDN in front of a storage account does: relying parties need https.
func (a *azurite) front(t *testing.T, containerName string) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "read only", http.StatusMethodNotAllowed)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, a.url+"/"+azuriteAccount+"/"+containerName+r.URL.Path, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for _, h := range []string{"Content-Type", "Cache-Control"} {
			if v := resp.Header.Get(h); v != "" && resp.StatusCode == http.StatusOK {
				w.Header().Set(h, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, io.LimitReader(resp.Body, 1<<20))
	}))
	t.Cleanup(srv.Close)
	return srv
}
