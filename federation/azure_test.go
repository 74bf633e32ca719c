package federation_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

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
type clock struct{ nanos atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.nanos.Store(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.nanos.Load()) }
func (c *clock) Advance(d time.Duration) { c.nanos.Add(int64(d)) }

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
	opts := &federation.AzureConfig{
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
		m(opts)
	}
	cred, err := federation.NewAzureCredential(opts)
	require.NoError(t, err)
	return cred
}

func getToken(t *testing.T, cred azcore.TokenCredential) (azcore.AccessToken, error) {
	return cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{scope}})
}

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

// TestAzurePreflight: assertions Entra would refuse are stopped before they
// are sent, with an error naming the mismatch.
func TestAzurePreflight(t *testing.T) {
	tests := []struct {
		name     string
		audience string
		life     time.Duration
		advance  time.Duration
		mod      func(*env) func(*federation.AzureConfig)
		wantErr  error
		wantHint string
	}{
		{name: "audience", audience: "api://Other", life: time.Hour, wantErr: federation.ErrAssertionAudience},
		{name: "issuer with a trailing slash", audience: federation.DefaultAudience, life: time.Hour,
			mod: func(e *env) func(*federation.AzureConfig) {
				return func(o *federation.AzureConfig) { o.Issuer = e.issuer.Issuer() + "/" }
			}, wantErr: federation.ErrAssertionIssuer, wantHint: "trailing slash"},
		{name: "subject", audience: federation.DefaultAudience, life: time.Hour,
			mod: func(*env) func(*federation.AzureConfig) {
				return func(o *federation.AzureConfig) { o.Subject = "system:serviceaccount:payments:other" }
			}, wantErr: federation.ErrAssertionSubject},
		{name: "about to expire", audience: federation.DefaultAudience, life: 10 * time.Minute, advance: 10*time.Minute - 5*time.Second, wantErr: federation.ErrAssertionExpired},
		{name: "expired: the file source refuses it", audience: federation.DefaultAudience, life: 10 * time.Minute, advance: 11 * time.Minute, wantErr: tokens.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.project(t, tt.audience, tt.life)
			e.clk.Advance(tt.advance)
			var mods []func(*federation.AzureConfig)
			if tt.mod != nil {
				mods = append(mods, tt.mod(e))
			}
			_, err := getToken(t, e.credential(t, mods...))
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantHint != "" {
				assert.Contains(t, err.Error(), tt.wantHint)
			}
			assert.Empty(t, e.entra.Exchanges(), "nothing was sent to Entra")
		})
	}
}

// TestAzureEntraRefusals: mismatches only Entra can see are refused the way
// Entra refuses them, and come back typed with the fix.
func TestAzureEntraRefusals(t *testing.T) {
	tests := []struct {
		name      string
		fc        func(e *env) entratest.FederatedCredential
		setup     func(t *testing.T, e *env)
		wantCode  int
		wantErr   error
		wantCheck error
	}{
		{name: "subject", wantCheck: federation.ErrAssertionSubject, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer(), Subject: "system:serviceaccount:payments:other", Audience: federation.DefaultAudience}
		}, wantCode: 700213, wantErr: federation.ErrNoCredentialForSubject},
		{name: "issuer", wantCheck: federation.ErrAssertionIssuer, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer() + "/", Subject: subject, Audience: federation.DefaultAudience}
		}, wantCode: 700211, wantErr: federation.ErrNoCredentialForIssuer},
		{name: "audience", wantCheck: federation.ErrAssertionAudience, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer(), Subject: subject, Audience: "api://Other"}
		}, wantCode: 700212, wantErr: federation.ErrNoCredentialForAudience},
		{name: "signing key not published", setup: func(t *testing.T, e *env) { rotate(t, e.issuer, nil, false) },
			wantCode: 7000272, wantErr: federation.ErrSigningKeyNotFound},
		{name: "issuer unreachable", setup: func(t *testing.T, e *env) { e.issuer.SetFailing(true) },
			wantCode: 90061, wantErr: federation.ErrIssuerUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{}
			var fcs []entratest.FederatedCredential
			if tt.fc != nil {
				// The issuer URL is known only once the env exists: build
				// it, then register the credential.
				e = newEnv(t, entratest.FederatedCredential{})
				fcs = []entratest.FederatedCredential{tt.fc(e)}
				e.entra.AddApp(entratest.App{ClientID: clientID, Credentials: fcs})
			} else {
				e = newEnv(t)
			}
			e.project(t, federation.DefaultAudience, time.Hour)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			_, err := getToken(t, e.credential(t))
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorIs(t, err, federation.ErrEntra)
			var entraErr *federation.EntraError
			require.ErrorAs(t, err, &entraErr)
			assert.Equal(t, tt.wantCode, entraErr.Code)
			assert.NotEmpty(t, entraErr.Fix)
			assert.Equal(t, 1, strings.Count(err.Error(), fmt.Sprintf("AADSTS%d", tt.wantCode)), "the code is printed once: %v", err)
			if tt.wantCheck != nil {
				require.ErrorIs(t, err, tt.wantCheck, "Entra's refusal matches the pre-flight sentinel too")
			}
			ex := e.entra.Exchanges()
			require.Len(t, ex, 1)
			assert.Equal(t, tt.wantCode, ex[0].Code)
		})
	}
}

// TestAzureAssertionExpiredAtEntra: Entra's clock is ahead of ours; its
// AADSTS700024 comes back as ErrAssertionExpired.
func TestAzureAssertionExpiredAtEntra(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, time.Hour)
	local := e.clk.Now()
	cred := e.credential(t, func(o *federation.AzureConfig) { o.Now = func() time.Time { return local } })
	e.clk.Advance(2 * time.Hour)
	_, err := getToken(t, cred)
	require.ErrorIs(t, err, federation.ErrAssertionExpired)
	var entraErr *federation.EntraError
	require.ErrorAs(t, err, &entraErr)
	assert.Equal(t, 700024, entraErr.Code)
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
		{name: "no client", env: map[string]string{federation.EnvTenantID: "t", federation.EnvTokenFile: "/x"}, wantField: "ClientID"},
		{name: "no tenant", env: map[string]string{federation.EnvClientID: "c", federation.EnvTokenFile: "/x"}, wantField: "TenantID"},
		{name: "bad tenant", env: map[string]string{federation.EnvClientID: "c", federation.EnvTenantID: "t/../x", federation.EnvTokenFile: "/x"}, wantField: "TenantID"},
		{name: "no token", env: map[string]string{federation.EnvClientID: "c", federation.EnvTenantID: "t"}, wantField: "Source"},
		{name: "http authority", env: full, opts: federation.AzureConfig{AuthorityHost: "http://127.0.0.1/"}, wantField: "AuthorityHost"},
		{name: "negative margin", env: full, opts: federation.AzureConfig{MinRemaining: -1}, wantField: "MinRemaining"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Getenv = func(k string) string { return tt.env[k] }
			cred, err := federation.NewAzureCredential(&opts)
			if tt.wantField != "" {
				require.ErrorIs(t, err, federation.ErrConfig)
				var cerr *federation.ConfigError
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
	_, err := federation.NewAzureCredential(&federation.AzureConfig{ClientID: "c", TenantID: "t", TokenFile: "/nonexistent", Getenv: func(string) string { return "" }})
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

// TestAzureRetriesNeverSendExpired: Entra is unavailable twice and azcore
// retries with the same assertion; meanwhile the assertion runs out of time.
// The per-attempt check stops it before it leaves, with a typed error.
func TestAzureRetriesNeverSendExpired(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, 10*time.Minute)
	e.clk.Advance(10*time.Minute - 15*time.Second) // 15 s left: passes the pre-flight
	cred := e.credential(t, func(o *federation.AzureConfig) {
		o.ClientOptions.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 2 * time.Millisecond}
	})
	e.entra.Unavailable(2, func() { e.clk.Advance(4 * time.Second) })
	_, err := getToken(t, cred)
	require.ErrorIs(t, err, federation.ErrAssertionExpired)
	var pf *federation.PreflightError
	require.ErrorAs(t, err, &pf)
	assert.Equal(t, "expiry", pf.Check)
	assert.Empty(t, e.entra.Exchanges(), "the attempt that would have carried a stale assertion never left")
}

// TestEntraStandInRules: the stand-in refuses what Entra ID refuses beyond
// credential matching: algorithms other than RS256, a scope without
// /.default, an app without federated credentials.
func TestEntraStandInRules(t *testing.T) {
	t.Run("ES256 assertion", func(t *testing.T) {
		e := newEnv(t)
		rotate(t, e.issuer, testkeys.Generated("p256"), true)
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := getToken(t, e.credential(t))
		var entraErr *federation.EntraError
		require.ErrorAs(t, err, &entraErr)
		assert.Equal(t, 700027, entraErr.Code)
	})
	t.Run("scope without /.default", func(t *testing.T) {
		e := newEnv(t)
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := e.credential(t).GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/user_impersonation"}})
		var entraErr *federation.EntraError
		require.ErrorAs(t, err, &entraErr)
		assert.Equal(t, 1002012, entraErr.Code)
	})
	t.Run("no federated credentials", func(t *testing.T) {
		e := newEnv(t)
		e.entra.AddApp(entratest.App{ClientID: clientID})
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := getToken(t, e.credential(t))
		require.ErrorIs(t, err, federation.ErrNoMatchingCredential)
	})
}
