package federation_test

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/tokens"
)

// TestAzureCredential: the real azidentity client obtains an access token
// from the Entra stand-in with a projected token, verified through the
// issuer's discovery document and JWKS.
func TestAzureCredential(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, time.Hour)
	cred := e.credential(t)
	tok, err := getToken(t, cred)
	require.NoError(t, err)
	assert.Contains(t, tok.Token, "entratest-")
	ex := e.entra.Exchanges()
	require.Len(t, ex, 1)
	assert.Zero(t, ex[0].Code)

	// A cached access token needs no request and no assertion.
	_, err = getToken(t, cred)
	require.NoError(t, err)
	assert.Len(t, e.entra.Exchanges(), 1)
}

// TestAzureConfig: explicit options first, then the webhook's environment;
// typed errors for what is missing.
func TestAzureConfig(t *testing.T) {
	full := map[string]string{
		federation.EnvClientID: "env-client", federation.EnvTenantID: "env-tenant",
		federation.EnvTokenFile: "/var/run/secrets/azure/tokens/azure-identity-token", federation.EnvAuthorityHost: "https://login.microsoftonline.us/",
	}
	tests := []struct {
		name       string
		env        map[string]string
		opts       federation.AzureConfig
		wantClient string
		wantTenant string
		wantHost   string
		wantField  string
	}{
		{name: "all from the environment", env: full, wantClient: "env-client", wantTenant: "env-tenant", wantHost: "https://login.microsoftonline.us/"},
		{name: "options win", env: full, opts: federation.AzureConfig{ClientID: "c", TenantID: "t", AuthorityHost: "https://login.chinacloudapi.cn/"},
			wantClient: "c", wantTenant: "t", wantHost: "https://login.chinacloudapi.cn/"},
		{name: "cloud option wins over the environment", env: full, opts: federation.AzureConfig{ClientOptions: azcore.ClientOptions{Cloud: cloud.AzureGovernment}},
			wantClient: "env-client", wantTenant: "env-tenant", wantHost: cloud.AzureGovernment.ActiveDirectoryAuthorityHost},
		{name: "public cloud by default", env: map[string]string{federation.EnvClientID: "c", federation.EnvTenantID: "t", federation.EnvTokenFile: "/x"},
			wantClient: "c", wantTenant: "t", wantHost: ""},
		{name: "no client", env: map[string]string{federation.EnvTenantID: "t", federation.EnvTokenFile: "/x"}, wantField: "federation.AzureConfig.ClientID"},
		{name: "no tenant", env: map[string]string{federation.EnvClientID: "c", federation.EnvTokenFile: "/x"}, wantField: "federation.AzureConfig.TenantID"},
		{name: "bad tenant", env: map[string]string{federation.EnvClientID: "c", federation.EnvTenantID: "t/../x", federation.EnvTokenFile: "/x"}, wantField: "federation.AzureConfig.TenantID"},
		{name: "no token", env: map[string]string{federation.EnvClientID: "c", federation.EnvTenantID: "t"}, wantField: "federation.AzureConfig.Source"},
		{name: "http authority", env: full, opts: federation.AzureConfig{AuthorityHost: "http://127.0.0.1/"}, wantField: "federation.AzureConfig.AuthorityHost"},
		{name: "negative margin", env: full, opts: federation.AzureConfig{MinRemaining: -1}, wantField: "federation.AzureConfig.MinRemaining"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Getenv = func(k string) string { return tt.env[k] }
			cred, err := federation.NewAzureCredential(opts)
			if tt.wantField != "" {
				require.ErrorIs(t, err, ksa.ErrInvalidConfig)
				var cerr *ksa.ConfigError
				require.ErrorAs(t, err, &cerr)
				assert.Equal(t, tt.wantField, cerr.Field)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantClient, cred.ClientID())
			assert.Equal(t, tt.wantTenant, cred.TenantID())
			assert.Equal(t, tt.wantHost, cred.AuthorityHost())
		})
	}
	// The token file is not read at construction.
	_, err := federation.NewAzureCredential(federation.AzureConfig{ClientID: "c", TenantID: "t", TokenFile: "/nonexistent", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
}

// TestAzureMissingTokenFile: a missing file is a typed error at GetToken.
func TestAzureMissingTokenFile(t *testing.T) {
	e := newEnv(t)
	_, err := getToken(t, e.credential(t))
	require.ErrorIs(t, err, tokens.ErrTokenFile)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestAzureRotation: while the kubelet rotates the projected token, 64
// goroutines ask for tokens; Entra never receives an expired or partial
// assertion. Access tokens live under five minutes, so MSAL caches none and
// every call reaches the stand-in.
func TestAzureRotation(t *testing.T) {
	e := newEnv(t)
	e.entra = entratest.Start(t, entratest.Config{
		TenantID: tenantID, IssuerClient: e.issuer.Client(), Now: e.clk.Now, TokenLifetime: time.Minute,
		Apps: []entratest.App{{ClientID: clientID, Credentials: []entratest.FederatedCredential{{Issuer: e.issuer.Issuer(), Subject: subject, Audience: federation.DefaultAudience}}}},
	})
	const life = 10 * time.Minute
	e.project(t, federation.DefaultAudience, life)
	cred := e.credential(t)

	var wg sync.WaitGroup
	for round := 0; round < 6; round++ {
		for g := 0; g < 64; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := getToken(t, cred)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		// The kubelet rotates at 80% of the lifetime; the old token is
		// expired soon after.
		e.clk.Advance(8 * time.Minute)
		e.project(t, federation.DefaultAudience, life)
		e.clk.Advance(3 * time.Minute)
	}
	ex := e.entra.Exchanges()
	require.GreaterOrEqual(t, len(ex), 6, "every round reached Entra")
	t.Logf("%d exchanges", len(ex))
	for _, x := range ex {
		assert.Zero(t, x.Code, "Entra refused an assertion (AADSTS%d)", x.Code)
	}
}

// TestAzureCachedTokenSurvivesFileProblem: a cached access token is still
// served when the projected file goes away; a new scope then needs the file
// and gets the typed error.
func TestAzureCachedTokenSurvivesFileProblem(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, time.Hour)
	cred := e.credential(t)
	_, err := getToken(t, cred)
	require.NoError(t, err)
	require.NoError(t, os.Remove(e.path))
	e.clk.Advance(2 * time.Second) // past the file source's check interval
	_, err = getToken(t, cred)
	require.NoError(t, err, "served from azidentity's cache")
	_, err = cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{"https://vault.azure.net/.default"}})
	require.ErrorIs(t, err, tokens.ErrTokenFile)
}
