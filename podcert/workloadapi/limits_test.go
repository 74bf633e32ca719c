package workloadapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// TestDefaultMaxClients: DefaultMaxClients streams are served at once;
// one more is refused.
func TestDefaultMaxClients(t *testing.T) {
	e := newEnv(t, true, nil)
	c := e.client()
	ctx := withHeader(t.Context())
	for i := range workloadapi.DefaultMaxClients {
		s, err := c.FetchX509SVID(ctx, &workload.X509SVIDRequest{})
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err, "stream %d", i)
	}
	s, err := c.FetchX509SVID(ctx, &workload.X509SVIDRequest{})
	require.NoError(t, err)
	_, err = s.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Equal(t, workloadapi.DefaultMaxClients, e.srv.Status().Clients)
}

// TestMaxRequestBytes: a request over MaxRequestBytes is refused by gRPC
// before it is read; one that fits reaches the server.
func TestMaxRequestBytes(t *testing.T) {
	e := newEnv(t, true, nil)
	c := e.client()
	ctx := withHeader(t.Context())
	audience := func(n int) *workload.JWTSVIDRequest {
		return &workload.JWTSVIDRequest{Audience: []string{strings.Repeat("a", n)}}
	}
	_, err := c.FetchJWTSVID(ctx, audience(workloadapi.MaxRequestBytes))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	_, err = c.FetchJWTSVID(ctx, audience(workloadapi.MaxRequestBytes-16))
	assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
}

// TestMaxResponseBytes: trust bundles that would make an answer over
// MaxResponseBytes are refused, and nothing of them is served.
func TestMaxResponseBytes(t *testing.T) {
	big := bigBundle(t) // 128 certificates of about 5.5 KiB
	dir := t.TempDir()
	e := newEnv(t, true, func(c *workloadapi.Config) {
		for i := range 7 {
			td := "partner" + strconv.Itoa(i) + ".example"
			path := filepath.Join(dir, td+".pem")
			require.NoError(t, os.WriteFile(path, big, 0o600))
			c.TrustBundles = append(c.TrustBundles, workloadapi.TrustBundle{TrustDomain: td, Path: path})
		}
	})
	require.ErrorIs(t, e.srv.Update(), workloadapi.ErrRefused)
	require.ErrorIs(t, e.srv.Ready(), workloadapi.ErrNoIdentity)
	assert.Empty(t, e.srv.Status().TrustDomains)
}

// bigBundle returns a trust bundle of 128 copies of a self-signed
// certificate carrying a 5 KiB extension (under 1 MiB of PEM).
func bigBundle(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "large root"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 9}, Value: make([]byte, 5<<10)}}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return []byte(strings.Repeat(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), 128))
}

// TestDefaultCredentialFileMode: the folder's key file is written with
// DefaultCredentialFileMode, its bundles with TrustBundleFileMode.
func TestDefaultCredentialFileMode(t *testing.T) {
	folder := t.TempDir()
	newEnv(t, true, func(c *workloadapi.Config) { c.CredentialFolder = folder })
	for name, want := range map[string]os.FileMode{
		workloadapi.CredentialFileName:                      workloadapi.DefaultCredentialFileMode,
		"cluster.local" + workloadapi.TrustBundleFileSuffix: workloadapi.TrustBundleFileMode,
	} {
		st, err := os.Stat(filepath.Join(folder, name))
		require.NoError(t, err)
		assert.Equal(t, want, st.Mode().Perm(), name)
	}
}
