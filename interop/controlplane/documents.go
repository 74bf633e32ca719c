package controlplane

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ksa-go/ksa/oidc"
)

// Documents returns the OIDC discovery document and key set kube-apiserver
// serves, read over https as the admin, byte for byte; the test fails when
// either cannot be read with status 200 (at most 1 MiB each).
func (cp *ControlPlane) Documents(t testing.TB) (discovery, keySet []byte) {
	t.Helper()
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cp.CertPool, MinVersion: tls.VersionTLS12}},
		Timeout:   10 * time.Second,
	}
	defer client.CloseIdleConnections()
	get := func(path string) []byte {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cp.URL+path, nil)
		if err != nil {
			t.Fatalf("controlplane: GET %s: %v", path, err)
		}
		req.Header.Set("Authorization", "Bearer "+cp.AdminToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("controlplane: GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("controlplane: GET %s: status %d, %v", path, resp.StatusCode, err)
		}
		return body
	}
	return get(oidc.DiscoveryPath), get(oidc.JWKSPath)
}
