package podcert_test

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

// BenchmarkIssue compares a whole decision (request checks, subject,
// signing with a P-256 CA, self-checks, status rules) with the bare
// x509.CreateCertificate call for a similar leaf.
func BenchmarkIssue(b *testing.B) {
	ca := newCA(b, false)
	pcr := newPCR(b, testkeys.Generated("p256"))
	b.Run("podcert", func(b *testing.B) {
		s := newSigner(b, ca, nil)
		req := podcert.FromV1(pcr)
		b.ReportAllocs()
		for b.Loop() {
			d, err := s.Decide(&req)
			if err != nil || d.Outcome != podcert.Issued {
				b.Fatal(err, d.Message)
			}
		}
	})
	b.Run("proof check alone", func(b *testing.B) {
		req := podcert.FromV1(pcr)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := req.PublicKey(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x509.CreateCertificate", func(b *testing.B) {
		pub := testkeys.Generated("p256").Public()
		b.ReportAllocs()
		for b.Loop() {
			tmpl := &x509.Certificate{SerialNumber: big.NewInt(42),
				Subject:   pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}},
				NotBefore: t0, NotAfter: t0.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
				ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
				BasicConstraintsValid: true, URIs: []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/cart"}}}
			if _, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
