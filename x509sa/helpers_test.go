package x509sa_test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	mathbig "math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// noJitter makes refresh times deterministic.
func noJitter(time.Duration) time.Duration { return 0 }

var testSA = ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"}

// OIDs of the attributes tests build subjects from.
var (
	oidCN  = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidO   = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU  = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidC   = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidUID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 2}
)

func atv(oid asn1.ObjectIdentifier, v any) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: v}
}

// saNames returns the attributes of a plain service-account subject.
func saNames(ns, name string) []pkix.AttributeTypeAndValue {
	return []pkix.AttributeTypeAndValue{
		atv(oidCN, "system:serviceaccount:"+ns+":"+name),
		atv(oidO, "system:serviceaccounts"),
		atv(oidO, "system:serviceaccounts:"+ns),
	}
}

// testCA is a self-signed CA valid a year around t0.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pool *x509.CertPool
}

func newCA(t testing.TB, keyName string) *testCA {
	t.Helper()
	key := testkeys.Generated(keyName)
	tmpl := &x509.Certificate{
		SerialNumber:          mathbig.NewInt(1),
		Subject:               pkix.Name{CommonName: "x509sa test CA " + keyName},
		NotBefore:             t0.Add(-24 * time.Hour),
		NotAfter:              t0.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issuer returns an Issuer at t0 with no jitter; opts may override.
func (ca *testCA) issuer(t testing.TB, opts x509sa.IssuerConfig) *x509sa.Issuer {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedClock(t0)
	}
	if opts.Jitter == nil {
		opts.Jitter = noJitter
	}
	opts.CA, opts.Key = ca.cert, ca.key
	is, err := x509sa.NewIssuer(opts)
	require.NoError(t, err)
	return is
}

// sign signs an arbitrary template for pub: hostile leaves the Issuer would
// never produce.
func (ca *testCA) sign(t testing.TB, tmpl *x509.Certificate, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert
}

// leafTemplate is a well-formed identity leaf for the subject name, valid an
// hour around t0, for client auth.
func leafTemplate(t testing.TB, s x509sa.Subject) *x509.Certificate {
	t.Helper()
	name, err := s.Name()
	require.NoError(t, err)
	return &x509.Certificate{
		SerialNumber:          mathbig.NewInt(42),
		Subject:               name,
		NotBefore:             t0.Add(-time.Hour),
		NotAfter:              t0.Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
}

func mustCSR(t testing.TB, key crypto.Signer, opts x509sa.CSROptions) []byte {
	t.Helper()
	der, err := x509sa.CreateCSR(rand.Reader, key, opts)
	require.NoError(t, err)
	return der
}

// rawCSR signs an arbitrary request template, for requests CreateCSR would
// refuse to build.
func rawCSR(t testing.TB, key crypto.Signer, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return der
}

// mustTemplate is a request template with the subject and nothing else (no
// usages requested), as other tools make them.
func mustTemplate(t testing.TB, s x509sa.Subject) *x509.CertificateRequest {
	t.Helper()
	name, err := s.Name()
	require.NoError(t, err)
	return &x509.CertificateRequest{Subject: name}
}

// asSigner turns a test table's key into a crypto.Signer (nil stays nil).
func asSigner(k any) crypto.Signer {
	s, _ := k.(crypto.Signer)
	return s
}

func serial(n int64) *mathbig.Int { return mathbig.NewInt(n) }
