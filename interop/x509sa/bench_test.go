package x509sa_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"

	k8sx509 "k8s.io/apiserver/pkg/authentication/request/x509"

	"github.com/ksa-go/ksa/x509sa"
)

// BenchmarkAuthenticate compares, on the same P-256 client leaf: x509sa's
// Verifier, kube-apiserver's x509 authenticator, and bare
// x509.Certificate.Verify.
func BenchmarkAuthenticate(b *testing.B) {
	c := newCA(b, "p256-ca", t0)
	issued := c.issue(b, x509sa.IssuerConfig{}, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, PodName: "web-0"}}, "p256")
	chain := []*x509.Certificate{issued.Leaf}

	b.Run("x509sa", func(b *testing.B) {
		v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: c.pool, Now: fixedClock(t0)})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify(chain); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kubernetes", func(b *testing.B) {
		opts := k8sx509.DefaultVerifyOptions()
		opts.Roots, opts.CurrentTime = c.pool, t0
		a := k8sx509.New(opts, k8sx509.CommonNameUserConversion)
		req := &http.Request{TLS: &tls.ConnectionState{PeerCertificates: chain}}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := a.AuthenticateRequest(req); !ok || err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		opts := x509.VerifyOptions{Roots: c.pool, CurrentTime: t0, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := issued.Leaf.Verify(opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
