package podcert_test

import (
	"crypto"
	"crypto/x509"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

func TestNewSignerValidates(t *testing.T) {
	ca := newCA(t, true)
	leafKey := testkeys.Generated("p256-leaf")
	leaf := makeCert(t, &x509.Certificate{SerialNumber: ca.root.SerialNumber, NotBefore: t0, NotAfter: t0.Add(time.Hour)}, ca.cert, leafKey.Public(), ca.key)
	for _, tc := range []struct {
		name  string
		cfg   podcert.SignerConfig
		field string
	}{
		{name: "no signer name", cfg: podcert.SignerConfig{Key: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "signer name without path", cfg: podcert.SignerConfig{SignerName: "example.com", Key: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "signer name one label", cfg: podcert.SignerConfig{SignerName: "example/x", Key: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "no CA", cfg: podcert.SignerConfig{SignerName: testSigner, Chain: ca.chain}, field: "Key"},
		{name: "no chain", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key}, field: "Chain"},
		{name: "nil in chain", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: []*x509.Certificate{ca.cert, nil}}, field: "Chain"},
		{name: "not a CA", cfg: podcert.SignerConfig{SignerName: testSigner, Key: leafKey, Chain: []*x509.Certificate{leaf}}, field: "Chain"},
		{name: "key of another certificate", cfg: podcert.SignerConfig{SignerName: testSigner, Key: leafKey, Chain: ca.chain}, field: "Key"},
		{name: "trust domain", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: ca.chain, TrustDomain: "Upper"}, field: "TrustDomain"},
		{name: "lifetime under an hour", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: ca.chain, MaxLifetime: time.Minute}, field: "MaxLifetime"},
		{name: "kubernetes.io over a day", cfg: podcert.SignerConfig{SignerName: "kubernetes.io/x", Key: ca.key, Chain: ca.chain, MaxLifetime: 25 * time.Hour}, field: "MaxLifetime"},
		{name: "backdate", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: ca.chain, Backdate: 5 * time.Minute}, field: "Backdate"},
		{name: "same keys", cfg: podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: ca.chain, ServeHostsKey: "a.b/c", ExtensionsKey: "a.b/c"}, field: "ExtensionsKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcert.NewSigner(tc.cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "podcert.SignerConfig."+tc.field, ce.Field)
		})
	}
}

func TestTrustBundle(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	assert.Equal(t, 1, strings.Count(string(s.TrustBundle()), "BEGIN CERTIFICATE"))
	assert.Equal(t, testSigner, s.SignerName())
	req := newRequest(t, testkeys.Generated("p256"))
	d, err := s.Decide(&req)
	require.NoError(t, err)
	// The chain carries the intermediate, not the root.
	assert.Equal(t, 2, strings.Count(d.CertificateChain, "BEGIN CERTIFICATE"))
}

// TestSignerAccessors: what a controller rotating CAs reads of a Signer,
// defaults included.
func TestSignerAccessors(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	assert.Equal(t, podcert.DefaultTrustDomain, s.TrustDomain())
	assert.Equal(t, podcert.DefaultMaxLifetime, s.MaxLifetime())
	assert.Equal(t, ca.chain[0], s.CA())
	s = newSigner(t, ca, func(c *podcert.SignerConfig) { c.TrustDomain, c.MaxLifetime = "example.org", 2*time.Hour })
	assert.Equal(t, "example.org", s.TrustDomain())
	assert.Equal(t, 2*time.Hour, s.MaxLifetime())
}

// kmsKey hides a key's type as a KMS or HSM signer does, and can be made
// to return corrupt signatures.
type kmsKey struct {
	crypto.Signer
	corrupt *bool
}

func (k kmsKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := k.Signer.Sign(r, digest, opts)
	if err == nil && *k.corrupt {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

// TestOpaqueCAIsVerified: the signature of a CA key of unknown
// implementation is verified on every certificate; one that does not
// verify is refused when the Signer is built and fails a decision later.
func TestOpaqueCAIsVerified(t *testing.T) {
	ca := newCA(t, false)
	corrupt := false
	s := newSigner(t, ca, func(c *podcert.SignerConfig) { c.Key = kmsKey{Signer: ca.key, corrupt: &corrupt} })
	req := newRequest(t, testkeys.Generated("p256"))
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome)
	require.NoError(t, d.Leaf.CheckSignatureFrom(ca.cert))

	corrupt = true
	_, err = s.Decide(&req)
	require.ErrorIs(t, err, podcert.ErrSigning)
	assert.ErrorContains(t, err, "signature does not verify")

	_, err = podcert.NewSigner(podcert.SignerConfig{SignerName: testSigner, Key: kmsKey{Signer: ca.key, corrupt: &corrupt}, Chain: ca.chain})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "podcert.SignerConfig.Key", ce.Field)
}
