// Package entratest is a local stand-in for Microsoft Entra ID's token
// endpoint, for testing workload identity federation without a cloud. It
// serves, over HTTPS on loopback, the tenant metadata document azidentity
// fetches and the token endpoint it posts the client-credentials form to,
// and it checks federated identity credentials the way Entra ID does: the
// client assertion is really verified through its issuer's discovery
// document and JWKS (with package oidc), then matched exactly on issuer,
// subject and audience. Refusals carry Entra's AADSTS codes.
//
//	entra := entratest.Start(t, entratest.Config{
//		TenantID:     "my-tenant",
//		IssuerClient: srv.Client(), // srv is an oidctest.Server
//		Apps: []entratest.App{{ClientID: "my-app", Credentials: []entratest.FederatedCredential{{
//			Issuer: srv.Issuer(), Subject: "system:serviceaccount:prod:billing", Audience: "api://AzureADTokenExchange",
//		}}}},
//	})
//	// azidentity: ClientOptions{Cloud: {ActiveDirectoryAuthorityHost: entra.URL()}, Transport: entra.Client()}
//	// and DisableInstanceDiscovery: true.
package entratest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// FederatedCredential is a federated identity credential: all three values
// must equal the assertion's exactly.
type FederatedCredential struct {
	Issuer, Subject, Audience string
}

// App is an application (or user-assigned managed identity) with its
// federated identity credentials.
type App struct {
	ClientID    string
	Credentials []FederatedCredential
}

// Config configures the stand-in.
type Config struct {
	// TenantID is the one tenant served. Required.
	TenantID string
	// Apps are the registered applications.
	Apps []App
	// IssuerClient fetches issuers' discovery documents and JWKS (e.g. an
	// oidctest server's Client). Nil means a new http.Client.
	IssuerClient *http.Client
	// Now is the clock assertions are checked against; nil means time.Now.
	Now func() time.Time
	// Algorithms are the assertion algorithms accepted; empty means RS256
	// alone, the only one Entra ID documents for federated credentials.
	Algorithms []string
	// TokenLifetime is expires_in of issued access tokens; zero means
	// 3599 s. MSAL does not cache tokens with less than five minutes left,
	// so a short lifetime makes every GetToken reach the server.
	TokenLifetime time.Duration
}

// Exchange records one request to the token endpoint.
type Exchange struct {
	At        time.Time
	ClientID  string
	Assertion string
	// Code is 0 for an issued token, else the AADSTS code of the refusal.
	Code int
}

// Server is a running stand-in.
type Server struct {
	srv  *httptest.Server
	opts Config
	now  func() time.Time

	mu          sync.Mutex
	apps        map[string]*App
	verifiers   map[string]*oidc.Verifier
	exchanges   []Exchange
	unavailable int
	onFail      func()
}

// Start starts the stand-in on a TLS httptest server, stopped when the test
// ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewServer starts the stand-in outside a test (examples, local demos).
// The caller must Close it. A Config without TenantID is a
// *ksa.ConfigError.
func NewServer(cfg Config) (*Server, error) {
	if cfg.TenantID == "" {
		return nil, &ksa.ConfigError{Field: "entratest.Config.TenantID", Reason: "is required"}
	}
	s := &Server{opts: cfg, now: cfg.Now, apps: map[string]*App{}, verifiers: map[string]*oidc.Verifier{}}
	if s.now == nil {
		s.now = time.Now
	}
	if len(s.opts.Algorithms) == 0 {
		s.opts.Algorithms = []string{"RS256"}
	}
	if s.opts.TokenLifetime == 0 {
		s.opts.TokenLifetime = 3599 * time.Second
	}
	for _, a := range cfg.Apps {
		s.AddApp(a)
	}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the authority host (azcore cloud.Configuration's
// ActiveDirectoryAuthorityHost).
func (s *Server) URL() string { return s.srv.URL + "/" }

// Client trusts the server's certificate; use it as the azcore transport.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AddApp registers (or replaces) an application.
func (s *Server) AddApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := a
	cp.Credentials = slices.Clone(a.Credentials)
	s.apps[a.ClientID] = &cp
}

// Unavailable makes the next n token requests answer 503 Service
// Unavailable (which azcore retries, re-sending the same assertion), calling
// hook, if not nil, as each arrives: tests move their clock there.
func (s *Server) Unavailable(n int, hook func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable, s.onFail = n, hook
}

// Exchanges returns every token request received, in order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.exchanges)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	tenant, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && rest == "v2.0/.well-known/openid-configuration":
		if tenant != s.opts.TenantID {
			s.fail(w, http.StatusBadRequest, "invalid_tenant", 90002, fmt.Sprintf("Tenant '%s' not found.", tenant))
			return
		}
		base := s.srv.URL + "/" + tenant
		writeJSON(w, http.StatusOK, map[string]any{
			"token_endpoint":         base + "/oauth2/v2.0/token",
			"issuer":                 base + "/v2.0",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize",
		})
	case r.Method == http.MethodPost && rest == "oauth2/v2.0/token":
		s.token(w, r, tenant)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request, tenant string) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request", 900144, "The request body must contain a valid form.")
		return
	}
	f := r.PostForm
	s.mu.Lock()
	down := s.unavailable > 0
	if down {
		s.unavailable--
	}
	hook := s.onFail
	s.mu.Unlock()
	if down {
		if hook != nil {
			hook()
		}
		s.fail(w, http.StatusServiceUnavailable, "temporarily_unavailable", 50196, "The server is temporarily unavailable.")
		return
	}
	ex := Exchange{At: s.now(), ClientID: f.Get("client_id"), Assertion: f.Get("client_assertion")}
	code, status, kind, msg := s.check(r.Context(), tenant, f.Get("grant_type"), f.Get("client_assertion_type"), f.Get("scope"), ex.ClientID, ex.Assertion)
	ex.Code = code
	s.mu.Lock()
	s.exchanges = append(s.exchanges, ex)
	s.mu.Unlock()
	if code != 0 {
		s.fail(w, status, kind, code, msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"token_type":     "Bearer",
		"expires_in":     int(s.opts.TokenLifetime / time.Second),
		"ext_expires_in": int(s.opts.TokenLifetime / time.Second),
		"access_token":   "entratest-" + randomID(),
	})
}

// check follows Entra ID's order: tenant, client, grant, issuer, key,
// signature, time, then the credential match.
func (s *Server) check(ctx context.Context, tenant, grant, assertionType, scope, clientID, assertion string) (code, status int, kind, msg string) {
	if tenant != s.opts.TenantID {
		return 90002, 400, "invalid_tenant", fmt.Sprintf("Tenant '%s' not found.", tenant)
	}
	if grant != "client_credentials" || assertionType != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || assertion == "" {
		return 900144, 400, "invalid_request", "The request body must contain the client credentials grant with a jwt-bearer client assertion."
	}
	if !hasDefaultScope(scope) {
		return 1002012, 400, "invalid_scope", fmt.Sprintf("The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", scope)
	}
	s.mu.Lock()
	app, ok := s.apps[clientID]
	s.mu.Unlock()
	if !ok {
		return 700016, 400, "unauthorized_client", fmt.Sprintf("Application with identifier '%s' was not found in the directory '%s'.", clientID, tenant)
	}
	if len(app.Credentials) == 0 {
		return 70021, 400, "invalid_client", "No matching federated identity record found for presented assertion."
	}
	claims, err := peekClaims(assertion)
	if err != nil {
		return 50027, 400, "invalid_request", "JWT token is invalid or malformed."
	}
	var forIssuer []FederatedCredential
	for _, fc := range app.Credentials {
		if fc.Issuer == claims.Issuer {
			forIssuer = append(forIssuer, fc)
		}
	}
	if len(forIssuer) == 0 {
		return 700211, 400, "invalid_client", fmt.Sprintf("No matching federated identity record found for presented assertion issuer '%s'.", claims.Issuer)
	}
	v, err := s.verifier(ctx, claims.Issuer)
	if err != nil {
		return 90061, 400, "invalid_client", fmt.Sprintf("Request to External OIDC endpoint failed. %v", err)
	}
	res, err := v.VerifyFor(ctx, assertion, claims.Audience)
	if err == nil && !slices.Contains(s.opts.Algorithms, res.Algorithm) {
		return 700027, 400, "invalid_client", fmt.Sprintf("Client assertion failed signature validation: algorithm %s is not supported for federated credentials.", res.Algorithm)
	}
	if err != nil {
		switch {
		case errors.Is(err, tokens.ErrUnknownKeyID), errors.Is(err, jwks.ErrNoKeys):
			return 7000272, 400, "invalid_client", "The certificate with identifier used to sign the federated credential could not be found in the metadata of identity provider."
		case errors.Is(err, tokens.ErrKeySource):
			return 90061, 400, "invalid_client", fmt.Sprintf("Request to External OIDC endpoint failed. %v", err)
		case errors.Is(err, tokens.ErrExpired), errors.Is(err, tokens.ErrNotYetValid), errors.Is(err, tokens.ErrIssuedInFuture), errors.Is(err, tokens.ErrMissingClaim):
			return 700024, 400, "invalid_client", fmt.Sprintf("Client assertion is not within its valid time range. Current time: %s, assertion valid from %s, expiry time of assertion %s.",
				s.now().UTC().Format(time.RFC3339), claims.NotBefore.UTC().Format(time.RFC3339), claims.Expiry.UTC().Format(time.RFC3339))
		default:
			return 700027, 400, "invalid_client", fmt.Sprintf("Client assertion failed signature validation. %v", err)
		}
	}
	var forSubject []FederatedCredential
	for _, fc := range forIssuer {
		if fc.Subject == claims.Subject {
			forSubject = append(forSubject, fc)
		}
	}
	if len(forSubject) == 0 {
		return 700213, 400, "invalid_client", fmt.Sprintf("No matching federated identity record found for presented assertion subject '%s'.", claims.Subject)
	}
	for _, fc := range forSubject {
		if slices.Contains(claims.Audience, fc.Audience) {
			return 0, 200, "", ""
		}
	}
	return 700212, 400, "invalid_client", fmt.Sprintf("No matching federated identity record found for presented assertion audience '%s'.", strings.Join(claims.Audience, ","))
}

// hasDefaultScope reports whether a space-separated scope list names a
// resource's /.default scope, as the client-credentials flow requires.
func hasDefaultScope(scope string) bool {
	for _, s := range strings.Fields(scope) {
		if strings.HasSuffix(s, "/.default") {
			return true
		}
	}
	return false
}

// exchangeAudience is the audience Entra ID expects of assertions.
const exchangeAudience = "api://AzureADTokenExchange"

// verifier returns (building on first use) the relying party of an issuer.
// Audiences are matched against credentials afterwards, so the verifier
// accepts any.
func (s *Server) verifier(ctx context.Context, issuer string) (*oidc.Verifier, error) {
	s.mu.Lock()
	v, ok := s.verifiers[issuer]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		Issuers: []string{issuer},
		// Audiences are matched against credentials afterwards: each
		// assertion is verified for its own audiences (VerifyFor).
		Audiences: []string{exchangeAudience},
		Client:    s.opts.IssuerClient,
		Now:       s.now,
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.verifiers[issuer] = v
	s.mu.Unlock()
	return v, nil
}

// peekClaims decodes the assertion's claims without verifying it, to route
// it to its issuer.
func peekClaims(assertion string) (*tokens.Claims, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	return tokens.ParseClaims(payload)
}

func (s *Server) fail(w http.ResponseWriter, status int, kind string, code int, msg string) {
	trace := randomID()
	writeJSON(w, status, map[string]any{
		"error":             kind,
		"error_description": fmt.Sprintf("AADSTS%d: %s Trace ID: %s Correlation ID: %s Timestamp: %s", code, msg, trace, trace, s.now().UTC().Format("2006-01-02 15:04:05Z")),
		"error_codes":       []int{code},
		"timestamp":         s.now().UTC().Format("2006-01-02 15:04:05Z"),
		"trace_id":          trace,
		"correlation_id":    trace,
		"error_uri":         s.srv.URL + "/error?code=" + fmt.Sprint(code),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
