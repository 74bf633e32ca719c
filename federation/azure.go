package federation

import (
	"context"
	"errors"
	"net/url"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokens"
)

// The environment the Azure workload identity webhook injects into pods.
const (
	EnvClientID      = "AZURE_CLIENT_ID"
	EnvTenantID      = "AZURE_TENANT_ID"
	EnvTokenFile     = "AZURE_FEDERATED_TOKEN_FILE"
	EnvAuthorityHost = "AZURE_AUTHORITY_HOST"
)

// Token paths the webhook has used for AZURE_FEDERATED_TOKEN_FILE.
const (
	// TokenPath is the path of azure-workload-identity v1.6.0 and later.
	TokenPath = "/var/run/secrets/azure/wi/token/azure-identity-token"
	// LegacyTokenPath is the path up to v1.5.1, which CAPZ and most
	// documentation still use.
	LegacyTokenPath = "/var/run/secrets/azure/tokens/azure-identity-token"
)

// DefaultAudience is the audience Entra ID requires of assertions.
const DefaultAudience = "api://AzureADTokenExchange"

// DefaultMinRemaining is the least lifetime an assertion must have left to
// be sent: enough to reach Entra ID and be checked.
const DefaultMinRemaining = 10 * time.Second

// TokenSource supplies the service-account token used as client assertion.
// [tokens.FileSource] is the usual one. Only the token is taken: the
// pre-flight reads its audience, issuer and expiry from the very bytes that
// will be sent, never from anything else a source might report.
// Implementations MUST be safe for concurrent use: GetToken calls Token from
// many goroutines at once.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenSourceFunc adapts a function to [TokenSource].
type TokenSourceFunc func(ctx context.Context) (string, error)

// Token calls f.
func (f TokenSourceFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// AzureConfig configures an [AzureCredential]. Explicit options win; empty
// ones are taken from the environment the workload identity webhook
// injects.
type AzureConfig struct {
	// ClientID of the app registration or user-assigned managed identity;
	// default $AZURE_CLIENT_ID.
	ClientID string
	// TenantID of the directory; default $AZURE_TENANT_ID.
	TenantID string
	// Source supplies assertions. When nil, a tokens.FileSource reads
	// TokenFile, or $AZURE_FEDERATED_TOKEN_FILE.
	Source TokenSource
	// TokenFile is the projected token's path when Source is nil.
	TokenFile string
	// AuthorityHost is Entra ID's address; when empty,
	// ClientOptions.Cloud.ActiveDirectoryAuthorityHost, then
	// $AZURE_AUTHORITY_HOST, then the public cloud. Must be https.
	AuthorityHost string

	// ClientOptions pass through to azidentity: cloud, transport, retry,
	// logging, telemetry.
	ClientOptions azcore.ClientOptions
	// AdditionallyAllowedTenants, Cache and DisableInstanceDiscovery pass
	// through to azidentity.ClientAssertionCredentialOptions.
	AdditionallyAllowedTenants []string
	Cache                      azidentity.Cache
	DisableInstanceDiscovery   bool

	// Audience the assertion must carry (pre-flight); empty means
	// DefaultAudience.
	Audience string
	// Issuer, when set, is the issuer the assertion must carry exactly
	// (pre-flight): the federated identity credential's issuer.
	Issuer string
	// Subject, when set, is the sub the assertion must carry exactly.
	Subject string
	// MinRemaining is the least lifetime an assertion must have left; zero
	// means DefaultMinRemaining.
	MinRemaining time.Duration
	// Now is the pre-flight clock; nil means time.Now.
	Now func() time.Time
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// AzureCredential is an azcore.TokenCredential that exchanges a Kubernetes
// service-account token for Microsoft Entra ID access tokens, on
// azidentity's ClientAssertionCredential. Before an assertion is sent it is
// checked (pre-flight): audience, expiry and, when configured, issuer and
// subject; a mismatch is a *PreflightError naming it instead of a remote
// AADSTS code. Entra ID's own refusals come back as *EntraError with the
// fix. Assertions come from a TokenSource that re-reads the projected file
// when it changes, and every attempt (azcore's retries included) is checked
// just before it leaves, so an assertion with less than MinRemaining left is
// never sent. It is safe for
// concurrent use.
type AzureCredential struct {
	cred     *azidentity.ClientAssertionCredential
	src      TokenSource
	clientID string
	tenantID string
	host     string
	audience string
	issuer   string
	subject  string
	minLeft  time.Duration
	now      func() time.Time
}

var _ azcore.TokenCredential = (*AzureCredential)(nil)

// NewAzureCredential resolves the configuration (explicit fields first,
// then the webhook's environment: the zero AzureConfig takes everything
// from it), checks it and builds the credential. The token file is not read
// until the first token request. Errors are a *ksa.ConfigError naming the
// field (matching ksa.ErrInvalidConfig).
func NewAzureCredential(cfg AzureConfig) (*AzureCredential, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &AzureCredential{
		src:      cfg.Source,
		clientID: firstNonEmpty(cfg.ClientID, getenv(EnvClientID)),
		tenantID: firstNonEmpty(cfg.TenantID, getenv(EnvTenantID)),
		audience: firstNonEmpty(cfg.Audience, DefaultAudience),
		issuer:   cfg.Issuer,
		subject:  cfg.Subject,
		minLeft:  cfg.MinRemaining,
		now:      cfg.Now,
	}
	if c.clientID == "" {
		return nil, &ksa.ConfigError{Field: "federation.AzureConfig.ClientID", Reason: "is empty and so is $" + EnvClientID + " (is the pod labelled azure.workload.identity/use=true and its service account annotated with azure.workload.identity/client-id?)"}
	}
	if c.tenantID == "" {
		return nil, &ksa.ConfigError{Field: "federation.AzureConfig.TenantID", Reason: "is empty and so is $" + EnvTenantID}
	}
	if !validTenantID(c.tenantID) {
		return nil, &ksa.ConfigError{Field: "federation.AzureConfig.TenantID", Reason: strconv.Quote(c.tenantID) + " holds more than letters, digits, '.' and '-'"}
	}
	if c.src == nil {
		path := firstNonEmpty(cfg.TokenFile, getenv(EnvTokenFile))
		if path == "" {
			return nil, &ksa.ConfigError{Field: "federation.AzureConfig.Source", Reason: "is nil, and TokenFile and $" + EnvTokenFile + " are empty (the webhook mounts " + TokenPath + ", or " + LegacyTokenPath + " before v1.6.0)"}
		}
		fs, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: path, Now: cfg.Now})
		if err != nil {
			return nil, &ksa.ConfigError{Field: "federation.AzureConfig.TokenFile", Reason: "cannot be used", Err: err}
		}
		c.src = fs
	}
	if c.minLeft < 0 {
		return nil, &ksa.ConfigError{Field: "federation.AzureConfig.MinRemaining", Reason: "is negative"}
	}
	if c.minLeft == 0 {
		c.minLeft = DefaultMinRemaining
	}
	if c.now == nil {
		c.now = time.Now
	}
	clientOpts := cfg.ClientOptions
	c.host = firstNonEmpty(cfg.AuthorityHost, clientOpts.Cloud.ActiveDirectoryAuthorityHost, getenv(EnvAuthorityHost))
	if c.host != "" {
		u, err := url.Parse(c.host)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, &ksa.ConfigError{Field: "federation.AzureConfig.AuthorityHost", Reason: strconv.Quote(c.host) + " is not an https URL", Err: err}
		}
		clientOpts.Cloud.ActiveDirectoryAuthorityHost = c.host
	}
	// Check the assertion before every attempt, retries included.
	clientOpts.PerRetryPolicies = append(slices.Clip(clientOpts.PerRetryPolicies), sendCheck{c: c})
	cred, err := azidentity.NewClientAssertionCredential(c.tenantID, c.clientID, c.assertion, &azidentity.ClientAssertionCredentialOptions{
		ClientOptions:              clientOpts,
		AdditionallyAllowedTenants: cfg.AdditionallyAllowedTenants,
		Cache:                      cfg.Cache,
		DisableInstanceDiscovery:   cfg.DisableInstanceDiscovery,
	})
	if err != nil {
		return nil, &ksa.ConfigError{Field: "federation.AzureConfig.ClientOptions", Reason: "are refused by azidentity", Err: err}
	}
	c.cred = cred
	return c, nil
}

// ClientID returns the resolved client ID.
func (c *AzureCredential) ClientID() string { return c.clientID }

// TenantID returns the resolved tenant ID.
func (c *AzureCredential) TenantID() string { return c.tenantID }

// AuthorityHost returns the resolved authority host, or "" for azidentity's
// default (the public cloud).
func (c *AzureCredential) AuthorityHost() string { return c.host }

// callState carries, through the context azidentity hands to the assertion
// callback, what the callback saw during one GetToken call.
type callState struct {
	err    error
	claims *tokens.Claims
}

type callStateKey struct{}

// GetToken implements azcore.TokenCredential. Errors are a *[PreflightError]
// or the file source's error (matching tokens.ErrTokenFile) when the
// assertion was refused before sending, an *[EntraError] when Entra ID
// refused it, or azidentity's error otherwise.
func (c *AzureCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	// Check the assertion up front. A mismatch (audience, issuer,
	// subject) is a configuration error no cache can hide: refuse at once.
	// An unreadable or expiring file may still be covered by a cached access
	// token, so azidentity is asked; if it fails, this error is the one that
	// names the cause.
	_, pre := c.assertion(ctx)
	if errors.Is(pre, ErrAssertionAudience) || errors.Is(pre, ErrAssertionIssuer) || errors.Is(pre, ErrAssertionSubject) {
		return azcore.AccessToken{}, pre
	}
	st := &callState{}
	tok, err := c.cred.GetToken(context.WithValue(ctx, callStateKey{}, st), opts)
	if err == nil {
		return tok, nil
	}
	if st.err != nil {
		return tok, st.err
	}
	if pre != nil {
		return tok, pre
	}
	var authErr *azidentity.AuthenticationFailedError
	if errors.As(err, &authErr) {
		if entra := classifyEntra(authErr, c.describe(ctx, st.claims)); entra != nil {
			return tok, entra
		}
	}
	return tok, err
}

// assertion is the ClientAssertionCredential callback: the current token,
// checked before it is sent.
func (c *AzureCredential) assertion(ctx context.Context) (string, error) {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	record := func(err error) (string, error) {
		if st != nil {
			st.err = err
		}
		return "", err
	}
	raw, err := c.src.Token(ctx)
	if err != nil {
		return record(err)
	}
	claims, err := readAssertion(raw)
	if err != nil {
		return record(err)
	}
	if st != nil {
		st.claims = claims
	}
	if err := c.preflight(claims); err != nil {
		return record(err)
	}
	return raw, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// validTenantID is azidentity's rule: letters, digits, '.' and '-'.
func validTenantID(id string) bool {
	for _, r := range id {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '-':
		default:
			return false
		}
	}
	return id != ""
}
