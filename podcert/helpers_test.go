package podcert_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

const testSigner = "example.com/workload"

// testCA is a self-signed CA valid a year around t0, optionally with an
// intermediate that signs.
type testCA struct {
	root, cert *x509.Certificate
	key        crypto.Signer
	chain      []*x509.Certificate
}

func makeCert(t testing.TB, tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

func caTemplate(cn string, serial int64, nb, na time.Time) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: nb, NotAfter: na, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
}

func newCA(t testing.TB, intermediate bool) *testCA {
	t.Helper()
	rootKey := testkeys.Generated("p256-root")
	rootTmpl := caTemplate("ksa test root", 1, t0.Add(-24*time.Hour), t0.Add(365*24*time.Hour))
	root := makeCert(t, rootTmpl, rootTmpl, rootKey.Public(), rootKey)
	if !intermediate {
		return &testCA{root: root, cert: root, key: rootKey, chain: []*x509.Certificate{root}}
	}
	key := testkeys.Generated("p256-intermediate")
	cert := makeCert(t, caTemplate("ksa test intermediate", 2, t0.Add(-24*time.Hour), t0.Add(300*24*time.Hour)), root, key.Public(), rootKey)
	return &testCA{root: root, cert: cert, key: key, chain: []*x509.Certificate{cert, root}}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.root)
	return p
}

func newSigner(t testing.TB, ca *testCA, mod func(*podcert.SignerConfig)) *podcert.Signer {
	t.Helper()
	cfg := podcert.SignerConfig{SignerName: testSigner, Key: ca.key, Chain: ca.chain, Now: fixedClock(t0)}
	if mod != nil {
		mod(&cfg)
	}
	s, err := podcert.NewSigner(cfg)
	require.NoError(t, err)
	return s
}

// stubCSR is the kubelet's request: an empty template signed by key.
func stubCSR(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	require.NoError(t, err)
	return der
}

// proof signs the pod UID the older way.
func proof(t testing.TB, key crypto.Signer, podUID string) []byte {
	t.Helper()
	msg := []byte(podUID)
	sum := sha256.Sum256(msg)
	var sig []byte
	var err error
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPSS(rand.Reader, k, crypto.SHA256, sum[:], nil)
	default:
		if _, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); ok && isEd25519(key) {
			sig, err = key.Sign(rand.Reader, msg, crypto.Hash(0))
		} else {
			sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256)
		}
	}
	require.NoError(t, err)
	return sig
}

func isEd25519(key crypto.Signer) bool {
	_, ok := key.Public().([]byte)
	if ok {
		return true
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	return err == nil && len(der) == 44
}

// newRequest is a request as the kubelet makes it.
func newRequest(t testing.TB, key crypto.Signer) podcert.Request {
	t.Helper()
	return podcert.Request{
		Namespace: "shop", Name: "req-abcde", Generation: 1,
		SignerName: testSigner,
		PodName:    "cart-7d9f", PodUID: "0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60",
		ServiceAccountName: "cart", ServiceAccountUID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60",
		NodeName: "node-1", NodeUID: "5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60",
		MaxExpirationSeconds: 86400,
		StubPKCS10Request:    stubCSR(t, key),
	}
}
