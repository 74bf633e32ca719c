package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

const clusterIssuer = "https://kubernetes.default.svc.cluster.local"

// cluster is a stand-in API server: it serves discovery and the key set to
// callers presenting the pod's current token, and records who asked.
type cluster struct {
	srv    *httptest.Server
	minter *tokens.Minter
	caFile string
	dir    string

	mu      sync.Mutex
	bearers []string
	paths   []string
	token   string
}

func newCluster(t *testing.T, clk *clock) *cluster {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	// jwks_uri names the external address, which a pod may not reach.
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: clusterIssuer, JWKSURI: "https://apiserver.unreachable.example:6443/openid/v1/jwks"}, []jwks.Key{pub})
	require.NoError(t, err)
	c := &cluster{dir: t.TempDir()}
	c.minter, err = tokens.NewMinter(tokens.MinterConfig{Issuer: clusterIssuer, Signer: key, Now: clk.Now})
	require.NoError(t, err)
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.bearers = append(c.bearers, r.Header.Get("Authorization"))
		c.paths = append(c.paths, r.URL.Path)
		ok := r.Header.Get("Authorization") == "Bearer "+c.token
		c.mu.Unlock()
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case oidc.DiscoveryPath:
			_, _ = w.Write(docs.Discovery)
		case oidc.JWKSPath:
			_, _ = w.Write(docs.JWKS)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(c.srv.Close)
	c.caFile = filepath.Join(c.dir, "ca.crt")
	require.NoError(t, os.WriteFile(c.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.srv.Certificate().Raw}), 0o600))
	c.rotate(t)
	return c
}

// rotate writes a new pod token, as the kubelet does, and makes it the
// only one the server accepts.
func (c *cluster) rotate(t *testing.T) {
	t.Helper()
	tok := c.mint(t, "https://kubernetes.default.svc.cluster.local")
	c.mu.Lock()
	c.token = tok
	c.mu.Unlock()
	require.NoError(t, os.WriteFile(c.tokenFile()+".new", []byte(tok), 0o600))
	require.NoError(t, os.Rename(c.tokenFile()+".new", c.tokenFile()))
}

func (c *cluster) tokenFile() string { return filepath.Join(c.dir, "token") }

func (c *cluster) mint(t *testing.T, audience string) string {
	t.Helper()
	tok, err := c.minter.Mint(t.Context(), tokens.Request{ServiceAccount: rpSA, Audiences: []string{audience}})
	require.NoError(t, err)
	return tok.Raw
}

func (c *cluster) config() oidc.InClusterConfig {
	return oidc.InClusterConfig{APIServer: c.srv.URL, CAFile: c.caFile, TokenFile: c.tokenFile()}
}

func TestInClusterVerifier(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	c := newCluster(t, clk)
	cfg := c.config()
	cfg.Verifier = oidc.VerifierConfig{Audiences: []string{"vault"}, Now: clk.Now}
	v, err := oidc.NewInClusterVerifier(t.Context(), cfg)
	require.NoError(t, err)

	res, err := v.Verify(t.Context(), c.mint(t, "vault"))
	require.NoError(t, err)
	assert.Equal(t, clusterIssuer, res.Issuer, "the issuer the API server names")
	assert.Equal(t, rpSA, res.Identity.ServiceAccount)
	assert.Equal(t, clusterIssuer, v.Provider(clusterIssuer).Issuer)
	c.mu.Lock()
	assert.Equal(t, []string{oidc.DiscoveryPath, oidc.JWKSPath}, c.paths, "keys from the API server, not the external jwks_uri")
	c.mu.Unlock()

	// The kubelet rotates the pod's token: the next fetch sends the new one.
	c.rotate(t)
	clk.Advance(2 * tokens.DefaultCheckInterval)
	require.NoError(t, v.KeySet(clusterIssuer).Refresh(t.Context()))
	c.mu.Lock()
	assert.Equal(t, "Bearer "+c.token, c.bearers[len(c.bearers)-1])
	c.mu.Unlock()

	// A token of another issuer is refused: its iss leads nowhere.
	_, err = v.Verify(t.Context(), "eyJhbGciOiJFUzI1NiIsImtpZCI6IngifQ.eyJpc3MiOiJodHRwczovL2F0dGFja2VyLmV4YW1wbGUiLCJhdWQiOlsidmF1bHQiXX0.c2ln")
	require.ErrorIs(t, err, tokens.ErrUnknownIssuer)
}

// The API server's address comes from the variables Kubernetes sets in
// every pod.
func TestInClusterVerifierFromEnvironment(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	c := newCluster(t, clk)
	u, err := url.Parse(c.srv.URL)
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	t.Setenv("KUBERNETES_SERVICE_HOST", host)
	t.Setenv("KUBERNETES_SERVICE_PORT", port)
	cfg := c.config()
	cfg.APIServer = ""
	cfg.Verifier = oidc.VerifierConfig{Audiences: []string{"vault"}, Now: clk.Now}
	v, err := oidc.NewInClusterVerifier(t.Context(), cfg)
	require.NoError(t, err)
	_, err = v.Verify(t.Context(), c.mint(t, "vault"))
	require.NoError(t, err)

	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	cfg.Verifier.Now = nil
	_, err = oidc.NewInClusterVerifier(t.Context(), cfg)
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Equal(t, "oidc: InClusterConfig.APIServer is empty and KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset: not running in a pod?", err.Error())
}

func TestInClusterVerifierRefuses(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	c := newCluster(t, clk)
	write := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	otherCA := write("other.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: selfSigned(t)})))
	tests := []struct {
		name string
		in   func(*oidc.InClusterConfig)
		cfg  func(*oidc.VerifierConfig)
		err  error
		msg  string
	}{
		{name: "http API server", in: func(in *oidc.InClusterConfig) { in.APIServer = strings.Replace(c.srv.URL, "https", "http", 1) },
			err: ksa.ErrInvalidConfig, msg: `is not an https URL`},
		{name: "CA file missing", in: func(in *oidc.InClusterConfig) { in.CAFile = filepath.Join(t.TempDir(), "none") },
			err: os.ErrNotExist, msg: `cannot be read`},
		{name: "CA file without certificates", in: func(in *oidc.InClusterConfig) { in.CAFile = write("ca.crt", "not PEM") },
			err: ksa.ErrInvalidConfig, msg: `holds no PEM certificate`},
		{name: "CA file over the limit", in: func(in *oidc.InClusterConfig) { in.CAFile = write("big.crt", strings.Repeat("a", oidc.MaxCABytes+1)) },
			err: ksa.ErrInvalidConfig, msg: `is over the 1048576-byte limit`},
		{name: "a CA that did not sign the server", in: func(in *oidc.InClusterConfig) { in.CAFile = otherCA },
			err: oidc.ErrDiscovery, msg: `certificate`},
		{name: "token file missing", in: func(in *oidc.InClusterConfig) { in.TokenFile = filepath.Join(t.TempDir(), "none") },
			err: tokens.ErrTokenFile},
		{name: "token refused", in: func(in *oidc.InClusterConfig) { in.TokenFile = write("token", c.mint(t, "x")) },
			err: oidc.ErrDiscovery, msg: `401`},
		{name: "issuer not among those configured", cfg: func(cfg *oidc.VerifierConfig) { cfg.Issuers = []string{"https://other.example"} },
			err: oidc.ErrIssuerMismatch, msg: `oidc: the discovery document names issuer "https://kubernetes.default.svc.cluster.local", not "https://other.example"`},
		{name: "a client of the caller", cfg: func(cfg *oidc.VerifierConfig) { cfg.Client = http.DefaultClient },
			err: ksa.ErrInvalidConfig, msg: `oidc: VerifierConfig.Client is set: the in-cluster client trusts the cluster CA alone`},
		{name: "credentials of the caller", cfg: func(cfg *oidc.VerifierConfig) {
			cfg.KeySetBearerToken = func(context.Context) (string, error) { return "x", nil }
		},
			err: ksa.ErrInvalidConfig},
		{name: "http allowed", cfg: func(cfg *oidc.VerifierConfig) { cfg.InsecureAllowHTTP = true }, err: ksa.ErrInvalidConfig},
		{name: "no audiences", cfg: func(cfg *oidc.VerifierConfig) { cfg.Audiences = nil }, err: ksa.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := c.config()
			cfg := oidc.VerifierConfig{Audiences: []string{"vault"}, Now: clk.Now}
			if tt.in != nil {
				tt.in(&in)
			}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			in.Verifier = cfg
			v, err := oidc.NewInClusterVerifier(t.Context(), in)
			require.ErrorIs(t, err, tt.err)
			assert.Nil(t, v)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// selfSigned returns a CA certificate that signed nothing.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return der
}
