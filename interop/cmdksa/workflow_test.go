// Package cmdksa runs the operator's workflow with the ksa command against
// real kube-apiservers: a signing key and the issuer's documents made by
// ksa, hosted over https on loopback; kube-apiserver started with that key
// and issuer; a TokenRequest token verified by ksa through the hosted
// documents, the issuer checked as Entra ID fetches it, and the token
// exchanged at the local Entra ID stand-in.
package cmdksa

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/oidc"
)

// eachVersion runs f on each kube-apiserver release with the command
// built (bin) and a scratch directory (work). A release whose binaries are
// missing skips (or fails, in CI) as every control-plane test does, before
// the command is built for nothing.
func eachVersion(t *testing.T, f func(t *testing.T, version, bin, work string)) {
	bin := filepath.Join(t.TempDir(), "ksa")
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		if _, _, err := controlplane.Binaries(version); err != nil {
			controlplane.StartForTest(t, controlplane.Config{Version: version})
		}
		buildKSA(t, bin)
		f(t, version, bin, t.TempDir())
	})
}

// buildKSA builds the command from this checkout into bin, unless an
// earlier subtest did.
func buildKSA(t *testing.T, bin string) {
	t.Helper()
	if _, err := os.Stat(bin); err == nil {
		return
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "cmd", "ksa")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building cmd/ksa: %s", out)
}

// ksa runs the command in dir and returns its standard output followed by
// its standard error, and its exit code.
func ksa(t testing.TB, bin, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Logf("ksa %s: exit %d\n%s%s", strings.Join(args, " "), exit.ExitCode(), stdout.String(), stderr.String())
		return stdout.String() + stderr.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return stdout.String() + stderr.String(), 0
}

// host serves dir over https as blob storage does for an issuer.
func host(t *testing.T, dir string) *httptest.Server {
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, oidc.DiscoveryPath):
			w.Header().Set("Content-Type", oidc.DiscoveryContentType)
		case strings.HasSuffix(r.URL.Path, oidc.JWKSPath):
			w.Header().Set("Content-Type", oidc.JWKSContentType)
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func readSigner(t *testing.T, path string) crypto.Signer {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block, "no PEM block in %s", path)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	return key.(crypto.Signer)
}

// TestSelfManagedIssuerWorkflow is the workload-identity setup of a
// self-managed cluster, each step through the ksa command or the real
// kube-apiserver, on each release.
func TestSelfManagedIssuerWorkflow(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		site := filepath.Join(work, "site")
		srv := host(t, site)
		issuer := srv.URL + "/cluster-1"
		caFile := filepath.Join(work, "issuer-ca.pem")
		require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

		// 1. The key and the documents.
		_, code := ksa(t, bin, work, "issuer", "keygen", "--out", "sa.key")
		require.Equal(t, 0, code)
		out, code := ksa(t, bin, work, "issuer", "render", "--issuer", issuer, "--key", "sa.key", "--out", filepath.Join(site, "cluster-1"))
		require.Equal(t, 0, code)
		assert.Contains(t, out, "--service-account-issuer="+issuer)

		// 2. kube-apiserver with that key and issuer.
		cp := controlplane.StartForTest(t, controlplane.Config{
			Version:    version,
			Issuers:    []string{issuer},
			SigningKey: readSigner(t, filepath.Join(work, "sa.key")),
		})
		cs := cp.Clientset()
		ns := cp.Namespace(t)
		sa, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		exp := int64(3600)
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			Audiences: []string{federation.DefaultAudience}, ExpirationSeconds: &exp,
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		tokenFile := filepath.Join(work, "token.jwt")
		require.NoError(t, os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600))
		subject := "system:serviceaccount:" + ns + ":billing"

		// 3. The token verifies through the hosted documents, and the
		// issuer passes the check clouds make.
		out, code = ksa(t, bin, work, "token", "verify", "--ca-file", caFile, "--issuer", issuer, "--audience", federation.DefaultAudience, "token.jwt")
		require.Equal(t, 0, code)
		assert.Contains(t, out, subject)
		out, code = ksa(t, bin, work, "issuer", "check", "--ca-file", caFile, issuer, "--token", "token.jwt", "--subject", subject)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "no problems found")

		// A trailing-slash mismatch is diagnosed, and the federated
		// credential's audience too.
		out, code = ksa(t, bin, work, "issuer", "check", "--ca-file", caFile, issuer+"/")
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "trailing slash")
		out, code = ksa(t, bin, work, "token", "verify", "--ca-file", caFile, "--issuer", issuer, "--audience", "api://other", "token.jwt")
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "api://other")

		// 4. The token exchanged at the Entra ID stand-in, which fetches
		// the issuer as Entra ID does.
		entra := entratest.Start(t, entratest.Config{
			TenantID:     "00000000-0000-0000-0000-00000000000a",
			IssuerClient: srv.Client(),
			Apps: []entratest.App{{ClientID: "00000000-0000-0000-0000-00000000000b", Credentials: []entratest.FederatedCredential{
				{Issuer: issuer, Subject: subject, Audience: federation.DefaultAudience},
			}}},
		})
		cred, err := federation.NewAzureCredential(federation.AzureConfig{
			ClientID: "00000000-0000-0000-0000-00000000000b", TenantID: "00000000-0000-0000-0000-00000000000a",
			TokenFile: tokenFile, Issuer: issuer,
			ClientOptions: azcore.ClientOptions{
				Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: entra.URL()},
				Transport: entra.Client(),
			},
			DisableInstanceDiscovery: true,
			Getenv:                   func(string) string { return "" },
		})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		access, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/.default"}})
		require.NoError(t, err)
		assert.NotEmpty(t, access.Token)
	})
}
