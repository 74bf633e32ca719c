// Package oidctest starts a Kubernetes-shaped service-account issuer on
// httptest, for testing relying parties: it serves the discovery document
// and JWKS exactly as kube-apiserver does, mints tokens with the issuer's
// current key, rotates keys, and can demand a bearer token or fail on
// purpose.
//
//	srv := oidctest.Start(t, oidctest.Config{})
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
//		Issuers:   []string{srv.Issuer()},
//		Audiences: []string{"vault"},
//		Client:    srv.Client(),
//	})
//	raw, err := srv.Mint(ctx, tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"}})
//	res, err := v.Verify(ctx, raw)
//
// Start ties the server to a test; NewServer runs one anywhere (an example, a
// local demo), and every method returns errors rather than failing a test.
package oidctest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// Config configures a test issuer. The zero value serves at the server's
// root with a new P-256 key, the real clock, and no authentication.
type Config struct {
	// Path is appended to the server URL to form the issuer, e.g.
	// "/cluster-1".
	Path string
	// Signer is the first signing key; nil means a new P-256 key.
	Signer crypto.Signer
	// BearerToken, when set, must be presented on every request
	// (Authorization: Bearer ...) or the server answers 401, as
	// kube-apiserver does for unauthenticated discovery.
	BearerToken string
	// Now is the minting clock; nil means time.Now.
	Now func() time.Time
}

// Server is a running test issuer.
type Server struct {
	srv     *httptest.Server
	issuer  string
	handler *oidc.Handler
	now     func() time.Time
	bearer  string

	mu     sync.Mutex
	keys   []jwks.Key // published, signing key first
	minter *tokens.Minter

	failing        atomic.Bool
	discoveryCount atomic.Int64
	jwksCount      atomic.Int64
}

// Start starts a test issuer on a TLS httptest server and stops it when the
// test ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a test issuer outside a test (examples, local demos). The
// caller must Close it.
func NewServer(cfg Config) (*Server, error) {
	s := &Server{now: cfg.Now, bearer: cfg.BearerToken}
	if s.now == nil {
		s.now = time.Now
	}
	signer := cfg.Signer
	if signer == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		signer = k
	}
	key, err := jwks.NewKey(signer.Public())
	if err != nil {
		return nil, err
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.StartTLS()
	s.issuer = s.srv.URL + cfg.Path
	s.keys = []jwks.Key{key}
	s.handler, err = oidc.NewHandler(oidc.HandlerConfig{Issuer: s.issuer, JWKSURI: s.srv.URL + oidc.JWKSPath, Keys: s.keys})
	if err == nil {
		err = s.setSigner(signer)
	}
	if err != nil {
		s.srv.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) setSigner(signer crypto.Signer) error {
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: s.issuer, Signer: signer, Now: s.now})
	if err != nil {
		return err
	}
	s.minter = m
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case oidc.DiscoveryPath, s.discoveryPath():
		s.discoveryCount.Add(1)
	case oidc.JWKSPath:
		s.jwksCount.Add(1)
	}
	if s.bearer != "" && r.Header.Get("Authorization") != "Bearer "+s.bearer {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if s.failing.Load() {
		http.Error(w, "failing on purpose", http.StatusInternalServerError)
		return
	}
	if r.URL.Path == s.discoveryPath() {
		// The discovery document lives under the issuer's path.
		r2 := r.Clone(r.Context())
		r2.URL.Path = oidc.DiscoveryPath
		s.handler.ServeHTTP(w, r2)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// discoveryPath is where relying parties look for the discovery document:
// the issuer's path without a trailing slash, as oidc.Discover builds it.
func (s *Server) discoveryPath() string {
	return strings.TrimSuffix(s.issuer[len(s.srv.URL):], "/") + oidc.DiscoveryPath
}

// Issuer returns the issuer URL (https://127.0.0.1:<port><Path>).
func (s *Server) Issuer() string { return s.issuer }

// URL returns the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Client returns an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Keys returns the published keys, the signing key first.
func (s *Server) Keys() []jwks.Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keys)
}

// Minter returns the minter for the current signing key.
func (s *Server) Minter() *tokens.Minter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.minter
}

// Mint mints a token with the current key (tokens.Minter.Mint's rules) and
// returns the compact JWT.
func (s *Server) Mint(ctx context.Context, req tokens.Request) (string, error) {
	tok, err := s.Minter().Mint(ctx, req)
	if err != nil {
		return "", err
	}
	return tok.Raw, nil
}

// Rotate makes signer the signing key (nil means a new P-256 key) and
// publishes it first; the previous keys stay published when keepOld is
// true, as during a Kubernetes key rotation, and are dropped otherwise. On
// error nothing changes.
func (s *Server) Rotate(signer crypto.Signer, keepOld bool) (jwks.Key, error) {
	if signer == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return jwks.Key{}, err
		}
		signer = k
	}
	key, err := jwks.NewKey(signer.Public())
	if err != nil {
		return jwks.Key{}, err
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: s.issuer, Signer: signer, Now: s.now})
	if err != nil {
		return jwks.Key{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := []jwks.Key{key}
	if keepOld {
		keys = append(keys, s.keys...)
	}
	if err := s.handler.SetKeys(keys); err != nil {
		return jwks.Key{}, err
	}
	s.minter = minter
	s.keys = keys
	return key, nil
}

// Documents returns the documents being served.
func (s *Server) Documents() *oidc.Documents { return s.handler.Documents() }

// SetFailing makes every request answer 500 (true) or serve normally.
func (s *Server) SetFailing(failing bool) { s.failing.Store(failing) }

// Requests returns how many discovery and JWKS requests arrived.
func (s *Server) Requests() (discovery, jwks int64) {
	return s.discoveryCount.Load(), s.jwksCount.Load()
}
