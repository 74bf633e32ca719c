package x509sa_test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

func TestNewIssuerConfig(t *testing.T) {
	ca := newCA(t, "p256-ca")
	other := newCA(t, "p256-other")
	leaf := ca.sign(t, leafTemplate(t, x509sa.Subject{ServiceAccount: testSA}), testkeys.Generated("p256").Public())
	noCertSign := ca.sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "ca2"}, NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(time.Hour),
		BasicConstraintsValid: true, IsCA: true, KeyUsage: x509.KeyUsageDigitalSignature,
	}, testkeys.Generated("p256-ca2").Public())
	weak := newCA(t, "rsa1024-ca")
	tests := []struct {
		name    string
		ca      *x509.Certificate
		key     any
		opts    x509sa.IssuerConfig
		wantErr error
	}{
		{name: "zero options", ca: ca.cert, key: ca.key},
		{name: "short max lowers the default min", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MaxLifetime: 30 * time.Minute}},
		{name: "bounds at the limits", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MaxLifetime: 91 * 24 * time.Hour, MinLifetime: 20 * time.Minute, Backdate: time.Hour}},

		{name: "nil CA", ca: nil, key: ca.key, wantErr: ksa.ErrInvalidConfig},
		{name: "nil key", ca: ca.cert, key: nil, wantErr: ksa.ErrInvalidConfig},
		{name: "leaf as CA", ca: leaf, key: testkeys.Generated("p256"), wantErr: ksa.ErrInvalidConfig},
		{name: "CA without cert sign", ca: noCertSign, key: testkeys.Generated("p256-ca2"), wantErr: ksa.ErrInvalidConfig},
		{name: "key of another CA", ca: ca.cert, key: other.key, wantErr: ksa.ErrInvalidConfig},
		{name: "weak CA key", ca: weak.cert, key: weak.key, wantErr: jwks.ErrUnsupportedKey},
		{name: "max over 91 days", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MaxLifetime: 91*24*time.Hour + time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "negative max", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MaxLifetime: -time.Hour}, wantErr: ksa.ErrInvalidConfig},
		{name: "min under 20 minutes", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MinLifetime: 20*time.Minute - time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "min over max", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{MaxLifetime: 2 * time.Hour, MinLifetime: 3 * time.Hour}, wantErr: ksa.ErrInvalidConfig},
		{name: "negative backdate", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{Backdate: -time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "backdate over an hour", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{Backdate: time.Hour + time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "negative jitter", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{RefreshJitter: -time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "unknown usages", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{Usages: 4}, wantErr: ksa.ErrInvalidConfig},
		{name: "nil chain entry", ca: ca.cert, key: ca.key, opts: x509sa.IssuerConfig{Chain: []*x509.Certificate{nil}}, wantErr: ksa.ErrInvalidConfig},
		{name: "key that cannot sign", ca: ca.cert, key: brokenSigner{ca.key}, wantErr: errKMS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.opts
			cfg.CA, cfg.Key = tt.ca, asSigner(tt.key)
			is, err := x509sa.NewIssuer(cfg)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, is)
				return
			}
			require.NoError(t, err)
		})
	}
}

var errKMS = errors.New("kms: unavailable")

// brokenSigner is a CA key whose signing service is down.
type brokenSigner struct{ crypto.Signer }

func (brokenSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, errKMS }

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestIssue(t *testing.T) {
	ca := newCA(t, "p256-ca")
	ec := testkeys.Generated("p256")
	rsaKey := testkeys.Generated("rsa2048")
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0", Extensions: map[string]string{"team": "a"}}
	client := mustCSR(t, ec, x509sa.CSROptions{Subject: sub})
	svid := mustCSR(t, ec, x509sa.CSROptions{Subject: sub, Usage: x509sa.ClientAndServerAuth, TrustDomain: "cluster.local", Hosts: []string{"cart.shop.svc", "10.0.0.7"}})
	plain := rawCSR(t, ec, mustTemplate(t, sub))
	nb := t0.Add(-x509sa.DefaultBackdate)
	errRand := errors.New("no entropy")

	tests := []struct {
		name    string
		opts    x509sa.IssuerConfig
		ca      *testCA
		req     x509sa.IssueRequest
		wantErr error
		// expectations when it succeeds
		lifetime time.Duration
		refresh  time.Duration // BeginRefreshAt - NotBefore
		ku       x509.KeyUsage
		usage    x509sa.Usage
	}{
		{name: "defaults", req: x509sa.IssueRequest{CSR: client}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "RSA adds key encipherment", req: x509sa.IssueRequest{CSR: mustCSR(t, rsaKey, x509sa.CSROptions{Subject: sub})}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, usage: x509sa.ClientAuth},
		{name: "request bound lowers the lifetime", req: x509sa.IssueRequest{CSR: client, MaxLifetime: 2 * time.Hour}, lifetime: 2 * time.Hour, refresh: time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "request bound at the minimum", req: x509sa.IssueRequest{CSR: client, MaxLifetime: time.Hour}, lifetime: time.Hour, refresh: 30 * time.Minute, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "request bound over the maximum", req: x509sa.IssueRequest{CSR: client, MaxLifetime: 48 * time.Hour}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "jitter is added", opts: x509sa.IssuerConfig{Jitter: func(n time.Duration) time.Duration { return 3*time.Minute + 500*time.Millisecond }}, req: x509sa.IssueRequest{CSR: client}, lifetime: 24 * time.Hour, refresh: 12*time.Hour + 3*time.Minute, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "jitter over its bound is clamped", opts: x509sa.IssuerConfig{Jitter: func(n time.Duration) time.Duration { return time.Hour }}, req: x509sa.IssueRequest{CSR: client}, lifetime: 24 * time.Hour, refresh: 12*time.Hour + 4*time.Minute + 59*time.Second, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "negative jitter is clamped", opts: x509sa.IssuerConfig{Jitter: func(n time.Duration) time.Duration { return -time.Hour }}, req: x509sa.IssueRequest{CSR: client}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "refresh stays 10 minutes before expiry", opts: x509sa.IssuerConfig{MaxLifetime: 20 * time.Minute, MinLifetime: 20 * time.Minute, Jitter: func(n time.Duration) time.Duration { return n - 1 }}, req: x509sa.IssueRequest{CSR: client}, lifetime: 20 * time.Minute, refresh: 10 * time.Minute, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "refresh delay capped at 12 hours", opts: x509sa.IssuerConfig{MaxLifetime: 91 * 24 * time.Hour}, req: x509sa.IssueRequest{CSR: client}, lifetime: 91 * 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "no EKU in the request, usage given", req: x509sa.IssueRequest{CSR: plain, Usage: x509sa.ClientAuth}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},
		{name: "X509-SVID with hosts", opts: x509sa.IssuerConfig{Usages: x509sa.ClientAndServerAuth}, req: x509sa.IssueRequest{CSR: svid}, lifetime: 24 * time.Hour, refresh: 12 * time.Hour, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAndServerAuth},
		{name: "CA expiry shortens the lifetime", ca: caUntil(t, t0.Add(5*time.Hour)), req: x509sa.IssueRequest{CSR: client}, lifetime: 5*time.Hour + x509sa.DefaultBackdate, refresh: 2*time.Hour + 31*time.Minute, ku: x509.KeyUsageDigitalSignature, usage: x509sa.ClientAuth},

		{name: "request bound under the minimum", req: x509sa.IssueRequest{CSR: client, MaxLifetime: time.Hour - time.Second}, wantErr: x509sa.ErrLifetime},
		{name: "negative request bound", req: x509sa.IssueRequest{CSR: client, MaxLifetime: -time.Hour}, wantErr: ksa.ErrInvalidConfig},
		{name: "CA expires too soon", ca: caUntil(t, t0.Add(30*time.Minute)), req: x509sa.IssueRequest{CSR: client}, wantErr: x509sa.ErrLifetime},
		{name: "CA not yet valid", opts: x509sa.IssuerConfig{Now: fixedClock(t0.Add(-48 * time.Hour))}, req: x509sa.IssueRequest{CSR: client}, wantErr: x509sa.ErrLifetime},
		{name: "CA expired", opts: x509sa.IssuerConfig{Now: fixedClock(t0.Add(400 * 24 * time.Hour))}, req: x509sa.IssueRequest{CSR: client}, wantErr: x509sa.ErrLifetime},
		{name: "usage the issuer does not grant", req: x509sa.IssueRequest{CSR: svid}, wantErr: x509sa.ErrInvalidUsage},
		{name: "usage differs from the request", opts: x509sa.IssuerConfig{Usages: x509sa.ClientAndServerAuth}, req: x509sa.IssueRequest{CSR: client, Usage: x509sa.ClientAndServerAuth}, wantErr: x509sa.ErrInvalidUsage},
		{name: "no usage anywhere", req: x509sa.IssueRequest{CSR: plain}, wantErr: x509sa.ErrInvalidUsage},
		{name: "malformed request", req: x509sa.IssueRequest{CSR: []byte{0x30, 0x00}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "no request", req: x509sa.IssueRequest{}, wantErr: x509sa.ErrMalformedCSR},
		{name: "random source fails", opts: x509sa.IssuerConfig{Rand: failingReader{errRand}}, req: x509sa.IssueRequest{CSR: client}, wantErr: errRand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ca
			if tt.ca != nil {
				c = tt.ca
			}
			got, err := c.issuer(t, tt.opts).Issue(tt.req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, got)
				if tt.wantErr == x509sa.ErrLifetime {
					var le *x509sa.LifetimeError
					require.ErrorAs(t, err, &le)
				}
				return
			}
			require.NoError(t, err)
			leaf := got.Leaf
			assert.Equal(t, nb, got.NotBefore)
			assert.Equal(t, nb, leaf.NotBefore)
			assert.Equal(t, nb.Add(tt.lifetime), got.NotAfter)
			assert.Equal(t, got.NotAfter, leaf.NotAfter)
			assert.Equal(t, nb.Add(tt.refresh), got.BeginRefreshAt)
			// The pod-certificate window.
			assert.False(t, got.BeginRefreshAt.Before(got.NotBefore.Add(10*time.Minute)))
			assert.False(t, got.BeginRefreshAt.After(got.NotAfter.Add(-10*time.Minute)))

			assert.Equal(t, tt.ku, leaf.KeyUsage)
			assert.Equal(t, tt.usage, got.Usage)
			assert.Equal(t, tt.usage.ExtKeyUsages(), leaf.ExtKeyUsage)
			assert.True(t, leaf.BasicConstraintsValid)
			assert.False(t, leaf.IsCA)
			assert.Equal(t, 1, leaf.SerialNumber.Sign())

			// The subject is the request's bytes: the UID survives (a
			// subject parsed and encoded again, as Kubernetes' own CA
			// does, loses it).
			req, err := x509.ParseCertificateRequest(tt.req.CSR)
			require.NoError(t, err)
			assert.Equal(t, req.RawSubject, leaf.RawSubject)
			assert.True(t, got.Subject.Equal(sub))
			assert.Equal(t, testSA.UID, got.Subject.ServiceAccount.UID)
			assert.Equal(t, req.DNSNames, leaf.DNSNames)
			assert.Equal(t, len(req.IPAddresses), len(leaf.IPAddresses))
			assert.Equal(t, req.URIs, leaf.URIs)

			block, rest := pem.Decode(got.ChainPEM)
			require.NotNil(t, block)
			assert.Equal(t, leaf.Raw, block.Bytes)
			assert.Empty(t, rest)
		})
	}
}

// caUntil is a CA that expires at notAfter.
func caUntil(t *testing.T, notAfter time.Time) *testCA {
	t.Helper()
	key := testkeys.Generated("p256-short")
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "short CA"},
		NotBefore: t0.Add(-time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func TestIssueChain(t *testing.T) {
	root := newCA(t, "p256-root")
	interKey := testkeys.Generated("ed25519-inter")
	inter := root.sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "intermediate"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}, interKey.Public())
	is, err := x509sa.NewIssuer(x509sa.IssuerConfig{CA: inter, Key: interKey, Chain: []*x509.Certificate{inter}, Now: fixedClock(t0), Jitter: noJitter})
	require.NoError(t, err)
	got, err := is.Issue(x509sa.IssueRequest{CSR: mustCSR(t, testkeys.Generated("ed25519"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})})
	require.NoError(t, err)

	var blocks [][]byte
	for rest := got.ChainPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks = append(blocks, b.Bytes)
	}
	require.Len(t, blocks, 2)
	assert.Equal(t, got.Leaf.Raw, blocks[0])
	assert.Equal(t, inter.Raw, blocks[1])

	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: root.pool, Now: fixedClock(t0)})
	require.NoError(t, err)
	cert, err := v.Verify([]*x509.Certificate{got.Leaf, inter})
	require.NoError(t, err)
	assert.Equal(t, testSA, cert.Subject.ServiceAccount)
	require.Len(t, cert.Chains, 1)
	assert.Len(t, cert.Chains[0], 3)
}
