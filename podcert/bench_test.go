package podcert_test

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/ksa-go/ksa/internal/bench"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

// BenchmarkIssue compares a whole decision (request checks, subject,
// signing with a P-256 CA, self-checks, status rules) with the bare
// x509.CreateCertificate call for a similar leaf.
func BenchmarkIssue(b *testing.B) {
	ca := newCA(b, false)
	base := newRequest(b, testkeys.Generated("p256"))
	b.Run("podcert", func(b *testing.B) {
		s := newSigner(b, ca, nil)
		req := base
		b.ReportAllocs()
		for b.Loop() {
			d, err := s.Decide(&req)
			if err != nil || d.Outcome != podcert.Issued {
				b.Fatal(err, d.Message)
			}
		}
	})
	b.Run("proof check alone", func(b *testing.B) {
		req := base
		b.ReportAllocs()
		for b.Loop() {
			if _, err := req.PublicKey(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x509.CreateCertificate", func(b *testing.B) {
		bare := bareIssue(b, ca)
		b.ReportAllocs()
		for b.Loop() {
			if err := bare(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// bareIssue returns a call of x509.CreateCertificate for a leaf like the
// pod certificate, with the same CA.
func bareIssue(b *testing.B, ca *testCA) func() error {
	pub := testkeys.Generated("p256").Public()
	return func() error {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(42),
			Subject:   pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}},
			NotBefore: t0, NotAfter: t0.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true, URIs: []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/cart"}}}
		_, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
		return err
	}
}

// BenchmarkIssueThroughput compares the throughput of whole decisions with
// that of the bare x509.CreateCertificate call in the same run, on every
// core: it alternates blocks of each, so that other load on the machine
// weighs on both alike, and reports certificates per second of each and
// their ratio (decide/bare).
func BenchmarkIssueThroughput(b *testing.B) {
	ca := newCA(b, false)
	s := newSigner(b, ca, nil)
	req := newRequest(b, testkeys.Generated("p256"))
	decide := func() error {
		d, err := s.Decide(&req)
		if err == nil && d.Outcome != podcert.Issued {
			err = d.Err
		}
		return err
	}
	bare := bareIssue(b, ca)
	const block = 200
	var decideT, bareT time.Duration
	ops := 0
	for i := 0; ops < b.N; i++ {
		if i%2 == 0 {
			decideT += bench.Phase(b, runtime.GOMAXPROCS(0), block, decide)
			bareT += bench.Phase(b, runtime.GOMAXPROCS(0), block, bare)
		} else {
			bareT += bench.Phase(b, runtime.GOMAXPROCS(0), block, bare)
			decideT += bench.Phase(b, runtime.GOMAXPROCS(0), block, decide)
		}
		ops += block
	}
	rate := func(d time.Duration) float64 { return float64(ops) / d.Seconds() }
	b.ReportMetric(float64(decideT.Nanoseconds())/float64(ops), "ns/op")
	b.ReportMetric(rate(decideT), "decide-cert/s")
	b.ReportMetric(rate(bareT), "bare-cert/s")
	b.ReportMetric(rate(decideT)/rate(bareT), "decide/bare")
}
