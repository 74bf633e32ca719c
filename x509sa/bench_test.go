package x509sa_test

import (
	"crypto/x509"
	"testing"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

// benchLeaf issues a P-256 client leaf with a pod and two extensions.
func benchLeaf(b *testing.B) (*testCA, *x509.Certificate) {
	ca := newCA(b, "p256-ca")
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0", Extensions: map[string]string{"team": "a", "zone": "eu-1"}}
	issued, err := ca.issuer(b, x509sa.IssuerConfig{}).Issue(x509sa.IssueRequest{CSR: mustCSR(b, testkeys.Generated("p256"), x509sa.CSROptions{Subject: sub})})
	if err != nil {
		b.Fatal(err)
	}
	return ca, issued.Leaf
}

// BenchmarkDecode is DecodeCertificate: leaf shape, subject, SANs and the
// credential ID of a parsed certificate.
func BenchmarkDecode(b *testing.B) {
	_, leaf := benchLeaf(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x509sa.DecodeCertificate(leaf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeName is the subject decoder alone.
func BenchmarkDecodeName(b *testing.B) {
	_, leaf := benchLeaf(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x509sa.DecodeName(leaf.Subject); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is Verifier.Verify; BenchmarkVerifyBare is
// x509.Certificate.Verify with the same options, the floor it builds on.
func BenchmarkVerify(b *testing.B) {
	ca, leaf := benchLeaf(b)
	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: ca.pool, Now: fixedClock(t0)})
	if err != nil {
		b.Fatal(err)
	}
	chain := []*x509.Certificate{leaf}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(chain); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyBare(b *testing.B) {
	ca, leaf := benchLeaf(b)
	opts := x509.VerifyOptions{Roots: ca.pool, CurrentTime: t0, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := leaf.Verify(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCSR parses and checks a P-256 request (signature included).
func BenchmarkParseCSR(b *testing.B) {
	der := mustCSR(b, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x509sa.ParseCSR(der); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue issues from a P-256 request with a P-256 CA.
func BenchmarkIssue(b *testing.B) {
	ca := newCA(b, "p256-ca")
	is := ca.issuer(b, x509sa.IssuerConfig{})
	req := x509sa.IssueRequest{CSR: mustCSR(b, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := is.Issue(req); err != nil {
			b.Fatal(err)
		}
	}
}
