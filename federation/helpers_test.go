package federation_test

import (
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

func tokenRequest() policy.TokenRequestOptions {
	return policy.TokenRequestOptions{Scopes: []string{scope}}
}

// mint mints a token with srv's current key, failing the test on error.
func mint(t testing.TB, srv *oidctest.Server, req tokens.Request) string {
	t.Helper()
	raw, err := srv.Mint(t.Context(), req)
	require.NoError(t, err)
	return raw
}

// rotate rotates srv's signing key, failing the test on error.
func rotate(t testing.TB, srv *oidctest.Server, signer crypto.Signer, keepOld bool) {
	t.Helper()
	_, err := srv.Rotate(signer, keepOld)
	require.NoError(t, err)
}

const (
	tenantID = "my-tenant"
	clientID = "my-app"
	scope    = "https://management.azure.com/.default"
)

var (
	podSA   = ksa.ServiceAccount{Namespace: "payments", Name: "billing", UID: "sa-uid"}
	subject = podSA.Username()
)

// clock is shared by the issuer, the projected file, the pre-flight and
// Entra's checks.
type clock = testclock.Clock

func newClock() *clock { return testclock.New(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)) }

// env is a whole federation: an issuer, a projected token file, Entra.
type env struct {
	clk    *clock
	issuer *oidctest.Server
	entra  *entratest.Server
	dir    string
	path   string
	n      int
}

func newEnv(t testing.TB, fcs ...entratest.FederatedCredential) *env {
	t.Helper()
	e := &env{clk: newClock(), dir: t.TempDir()}
	// RS256: the only algorithm Entra ID documents for federated tokens.
	e.issuer = oidctest.Start(t, oidctest.Config{Path: "/cluster-1", Now: e.clk.Now, Signer: testkeys.K8sRSA()})
	if fcs == nil {
		fcs = []entratest.FederatedCredential{{Issuer: e.issuer.Issuer(), Subject: subject, Audience: federation.DefaultAudience}}
	}
	e.entra = entratest.Start(t, entratest.Config{
		TenantID: tenantID, IssuerClient: e.issuer.Client(), Now: e.clk.Now,
		Apps: []entratest.App{{ClientID: clientID, Credentials: fcs}},
	})
	e.path = filepath.Join(e.dir, "azure-identity-token")
	return e
}

// project writes a token the way the kubelet does (a new directory, the
// symlink swapped by rename).
func (e *env) project(t testing.TB, audience string, life time.Duration) string {
	t.Helper()
	raw := mint(t, e.issuer, tokens.Request{ServiceAccount: podSA, Audiences: []string{audience}, ExpirationSeconds: int64(life / time.Second),
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-0", UID: "pod-uid"}})
	e.n++
	ts := fmt.Sprintf("..data-%d", e.n)
	require.NoError(t, os.Mkdir(filepath.Join(e.dir, ts), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, ts, "azure-identity-token"), []byte(raw), 0o644))
	require.NoError(t, os.Symlink(ts, filepath.Join(e.dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(e.dir, "..data_tmp"), filepath.Join(e.dir, "..data")))
	if _, err := os.Lstat(e.path); err != nil {
		require.NoError(t, os.Symlink(filepath.Join("..data", "azure-identity-token"), e.path))
	}
	return raw
}

func (e *env) credential(t testing.TB, mod ...func(*federation.AzureConfig)) *federation.AzureCredential {
	t.Helper()
	cfg := federation.AzureConfig{
		ClientID:  clientID,
		TenantID:  tenantID,
		TokenFile: e.path,
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: e.entra.URL()},
			Transport: e.entra.Client(),
			Retry:     policy.RetryOptions{MaxRetries: -1},
		},
		DisableInstanceDiscovery: true,
		Now:                      e.clk.Now,
		Getenv:                   func(string) string { return "" },
	}
	for _, m := range mod {
		m(&cfg)
	}
	cred, err := federation.NewAzureCredential(cfg)
	require.NoError(t, err)
	return cred
}

func getToken(t *testing.T, cred azcore.TokenCredential) (azcore.AccessToken, error) {
	return cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{scope}})
}
