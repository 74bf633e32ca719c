package leafcert_test

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"io"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/leafcert"
	"github.com/ksa-go/ksa/internal/testkeys"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func newCA(t testing.TB, key crypto.Signer, withSKI bool) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "leafcert test CA"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.AddDate(30, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	if !withSKI {
		// CreateCertificate derives one for a CA unless it is set; a
		// single zero byte, then cleared after parsing, stands for none.
		tmpl.SubjectKeyId = []byte{0}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	if !withSKI {
		ca.SubjectKeyId = nil
	}
	return ca
}

// TestIssueMatchesCreateCertificate: for every CA key type and a range of
// leaves, the to-be-signed bytes are exactly those x509.CreateCertificate
// writes for the same fields, and the certificate verifies under the CA.
func TestIssueMatchesCreateCertificate(t *testing.T) {
	longName := strings.Repeat("a", 60)
	subject := func(n pkix.Name) []byte {
		raw, err := marshalName(n)
		require.NoError(t, err)
		return raw
	}
	sa := pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}}
	wide := pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{longName, longName, longName, longName, longName}}
	spiffe, err := url.Parse("spiffe://cluster.local/ns/shop/sa/cart")
	require.NoError(t, err)
	topBit := new(big.Int).Lsh(big.NewInt(0xff), 120)

	leaves := []struct {
		name string
		tmpl x509.Certificate
		key  string
	}{
		{name: "pod certificate", key: "p256", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(42), Subject: sa, NotBefore: t0, NotAfter: t0.Add(24 * time.Hour),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
			URIs:        []*url.URL{spiffe},
		}},
		{name: "RSA leaf with hosts", key: "rsa3072", tmpl: x509.Certificate{
			SerialNumber: topBit, Subject: sa, NotBefore: t0, NotAfter: t0.Add(time.Hour),
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:    []string{"cart.shop.svc", "cart.shop.svc.cluster.local"},
			IPAddresses: []net.IP{net.ParseIP("10.0.0.7"), net.ParseIP("fd00::7")},
			URIs:        []*url.URL{spiffe},
		}},
		{name: "Ed25519 leaf, no SANs, no extended usage", key: "ed25519", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: sa, NotBefore: t0, NotAfter: t0.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature,
		}},
		{name: "two-byte key usage", key: "p384", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: sa, NotBefore: t0, NotAfter: t0.Add(time.Hour),
			KeyUsage: x509.KeyUsageKeyAgreement | x509.KeyUsageDecipherOnly,
		}},
		{name: "empty subject, critical names", key: "p256", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(9), NotBefore: t0, NotAfter: t0.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, URIs: []*url.URL{spiffe},
		}},
		{name: "no key usage", key: "p256", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: sa, NotBefore: t0, NotAfter: t0.Add(time.Hour),
		}},
		{name: "GeneralizedTime from 2050, long lengths", key: "p521", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(0x80), Subject: wide,
			NotBefore: time.Date(2049, 12, 31, 23, 0, 0, 0, time.UTC), NotAfter: time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC),
			KeyUsage: x509.KeyUsageDigitalSignature,
			DNSNames: strings.Split(strings.Repeat(longName+".example,", 8)+"x", ","),
		}},
		{name: "GeneralizedTime before 1950, local zone", key: "p256", tmpl: x509.Certificate{
			SerialNumber: big.NewInt(3), Subject: sa,
			NotBefore: time.Date(1949, 6, 1, 12, 0, 0, 0, time.FixedZone("X", 3600)), NotAfter: t0,
			KeyUsage: x509.KeyUsageDigitalSignature,
		}},
	}
	cas := []string{"p256", "p384", "p521", "rsa2048", "ed25519"}
	for _, caKey := range cas {
		for _, withSKI := range []bool{true, false} {
			key := testkeys.Generated(caKey)
			ca := newCA(t, key, withSKI)
			is, err := leafcert.New(ca, key, rand.Reader)
			require.NoError(t, err)
			assert.False(t, is.Verifies(), "a crypto/... key is not verified per certificate")
			for _, leaf := range leaves {
				t.Run(caKey+"/ski="+boolName(withSKI)+"/"+leaf.name, func(t *testing.T) {
					tmpl := leaf.tmpl
					tmpl.BasicConstraintsValid = true
					pub := testkeys.Generated(leaf.key).Public()
					want, err := x509.CreateCertificate(rand.Reader, &tmpl, ca, pub, key)
					require.NoError(t, err)
					wantCert, err := x509.ParseCertificate(want)
					require.NoError(t, err)

					got, err := is.Issue(rand.Reader, &leafcert.Template{
						Serial: tmpl.SerialNumber, Subject: subject(tmpl.Subject),
						NotBefore: tmpl.NotBefore, NotAfter: tmpl.NotAfter, PublicKey: pub,
						KeyUsage: tmpl.KeyUsage, ExtKeyUsage: tmpl.ExtKeyUsage,
						DNSNames: tmpl.DNSNames, IPAddresses: tmpl.IPAddresses, URIs: tmpl.URIs,
					})
					require.NoError(t, err)
					gotCert, err := x509.ParseCertificate(got)
					require.NoError(t, err)
					assert.Equal(t, wantCert.RawTBSCertificate, gotCert.RawTBSCertificate)
					assert.Equal(t, wantCert.SignatureAlgorithm, gotCert.SignatureAlgorithm)
					require.NoError(t, gotCert.CheckSignatureFrom(ca))
					if caKey == "ed25519" {
						// Ed25519 signatures are deterministic: the whole
						// certificate is the same.
						assert.Equal(t, want, got)
					}
				})
			}
		}
	}
}

func boolName(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// marshalName returns the DER of a subject as
// CreateCertificate computes it, read back from a certificate it makes.
func marshalName(n pkix.Name) ([]byte, error) {
	key := testkeys.Generated("ed25519")
	c := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: n}
	der, err := x509.CreateCertificate(rand.Reader, c, c, key.Public(), key)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return parsed.RawSubject, nil
}

// opaque hides a key's type, as a KMS or HSM signer does.
type opaque struct {
	crypto.Signer
	corrupt *bool
}

func (o opaque) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := o.Signer.Sign(r, digest, opts)
	if err == nil && o.corrupt != nil && *o.corrupt {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

type failing struct{ crypto.Signer }

func (failing) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("kms: unavailable")
}

func TestOpaqueSignersAreVerified(t *testing.T) {
	key := testkeys.Generated("p256")
	ca := newCA(t, key, true)
	corrupt := false
	is, err := leafcert.New(ca, opaque{Signer: key, corrupt: &corrupt}, rand.Reader)
	require.NoError(t, err)
	assert.True(t, is.Verifies())
	tmpl := &leafcert.Template{Serial: big.NewInt(1), Subject: []byte{0x30, 0}, NotBefore: t0, NotAfter: t0.Add(time.Hour),
		PublicKey: testkeys.Generated("p256").Public(), DNSNames: []string{"a.example"}}
	_, err = is.Issue(rand.Reader, tmpl)
	require.NoError(t, err)

	corrupt = true
	_, err = is.Issue(rand.Reader, tmpl)
	require.ErrorContains(t, err, "the signer's signature does not verify")

	_, err = leafcert.New(ca, opaque{Signer: key, corrupt: &corrupt}, rand.Reader)
	require.ErrorContains(t, err, "does not verify against the CA certificate")
	_, err = leafcert.New(ca, failing{key}, rand.Reader)
	require.ErrorContains(t, err, "kms: unavailable")
}

// brokenRSA is an RSA key whose private exponent is not its modulus's.
func brokenRSA() *rsa.PrivateKey {
	k := *testkeys.Generated("rsa2048").(*rsa.PrivateKey)
	k.D = new(big.Int).Add(k.D, big.NewInt(2))
	return &k
}

// TestCallersKeyChangedAfterNew: the Issuer signs with its own copy of a
// standard library key, so a caller changing its key value afterwards
// (the case CreateCertificate's verification exists for) changes nothing.
func TestCallersKeyChangedAfterNew(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		key    crypto.Signer
		change func()
	}{
		{name: "ECDSA private scalar", key: ecKey, change: func() {
			//lint:ignore SA1019 the test changes the key the way this deprecation warns against
			ecKey.D.Add(ecKey.D, big.NewInt(1))
		}},
		{name: "Ed25519 seed", key: edKey, change: func() { edKey[0] ^= 1 }},
		{name: "RSA precomputed values", key: rsaKey, change: func() { rsaKey.Precomputed = testkeys.Generated("rsa2048").(*rsa.PrivateKey).Precomputed }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := newCA(t, tc.key, true)
			is, err := leafcert.New(ca, tc.key, rand.Reader)
			require.NoError(t, err)
			assert.False(t, is.Verifies())
			tc.change()
			der, err := is.Issue(rand.Reader, &leafcert.Template{Serial: big.NewInt(7), Subject: []byte{0x30, 0}, NotBefore: t0, NotAfter: t0.Add(time.Hour),
				PublicKey: testkeys.Generated("p256").Public(), DNSNames: []string{"a.example"}})
			require.NoError(t, err)
			leaf, err := x509.ParseCertificate(der)
			require.NoError(t, err)
			require.NoError(t, leaf.CheckSignatureFrom(ca))
		})
	}
}

func TestRefused(t *testing.T) {
	key := testkeys.Generated("p256")
	ca := newCA(t, key, true)
	is, err := leafcert.New(ca, key, rand.Reader)
	require.NoError(t, err)
	good := leafcert.Template{Serial: big.NewInt(1), Subject: []byte{0x30, 0}, NotBefore: t0, NotAfter: t0.Add(time.Hour),
		PublicKey: testkeys.Generated("p256").Public()}
	// An X25519 key is one CreateCertificate refuses to certify.
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		change func(*leafcert.Template)
		want   string
	}{
		{name: "no serial", change: func(t *leafcert.Template) { t.Serial = nil }, want: "serial number must be positive"},
		{name: "zero serial", change: func(t *leafcert.Template) { t.Serial = big.NewInt(0) }, want: "serial number must be positive"},
		{name: "negative serial", change: func(t *leafcert.Template) { t.Serial = big.NewInt(-1) }, want: "serial number must be positive"},
		{name: "no subject", change: func(t *leafcert.Template) { t.Subject = nil }, want: "subject is required"},
		{name: "no key", change: func(t *leafcert.Template) { t.PublicKey = nil }, want: "unsupported"},
		{name: "non-ASCII DNS name", change: func(t *leafcert.Template) { t.DNSNames = []string{"café.example"} }, want: "not an IA5String"},
		{name: "non-ASCII URI", change: func(t *leafcert.Template) {
			t.URIs = []*url.URL{{Scheme: "spiffe", Host: "td", Path: "/é"}}
		}, want: ""},
		{name: "bad IP", change: func(t *leafcert.Template) { t.IPAddresses = []net.IP{{1, 2, 3}} }, want: "invalid IP address of 3 bytes"},
		{name: "unknown extended usage", change: func(t *leafcert.Template) {
			t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}
		}, want: "unsupported extended key usage"},
		{name: "key usage beyond decipherOnly", change: func(t *leafcert.Template) { t.KeyUsage = 1 << 16 }, want: "unknown key usage bits 0x10000"},
		{name: "negative key usage", change: func(t *leafcert.Template) { t.KeyUsage = -1 }, want: "unknown key usage bits"},
		{name: "X25519 key", change: func(t *leafcert.Template) { t.PublicKey = x25519.PublicKey() }, want: "unsupported public key type *ecdh.PublicKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := good
			tc.change(&tmpl)
			_, err := is.Issue(rand.Reader, &tmpl)
			if tc.want == "" {
				// url.URL.String escapes non-ASCII paths: nothing to refuse.
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}

	for _, tc := range []struct {
		name string
		ca   *x509.Certificate
		key  crypto.Signer
		want string
	}{
		{name: "no CA", key: key, want: "required"},
		{name: "no key", ca: ca, want: "required"},
		{name: "another key", ca: ca, key: testkeys.Generated("p384"), want: "not the CA certificate's"},
		{name: "P-224", ca: newCA(t, testkeys.Generated("p224"), true), key: testkeys.Generated("p224"), want: "unsupported ECDSA curve P-224"},
		{name: "CA without an encoded subject", ca: &x509.Certificate{PublicKey: key.Public()}, key: key, want: "no encoded subject"},
		{name: "short Ed25519 key", ca: ca, key: ed25519.PrivateKey(make([]byte, 40)), want: "an Ed25519 private key of 40 bytes, not 64"},
		{name: "inconsistent RSA key", ca: ca, key: brokenRSA(), want: "the CA key: crypto/rsa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := leafcert.New(tc.ca, tc.key, rand.Reader)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// FuzzIssue: whatever Issue accepts, x509.CreateCertificate writes the
// same to-be-signed bytes for.
func FuzzIssue(f *testing.F) {
	f.Add("cart.shop.svc", []byte{10, 0, 0, 7}, "spiffe://cluster.local/ns/shop/sa/cart", int64(1795000000), uint32(3600), int64(1), []byte{0x80, 1}, uint8(3), uint8(0))
	f.Add("", []byte{}, "", int64(-62135596800), uint32(0), int64(0x1ff), []byte{1}, uint8(0), uint8(1))
	f.Add("a..b", []byte(net.ParseIP("fd00::1")), "x:%zz", int64(2524608000), uint32(1), int64(0x100), []byte{0, 0, 1}, uint8(1), uint8(2))
	f.Add("x", []byte{}, "", int64(0), uint32(60), int64(1<<16), []byte{9}, uint8(4), uint8(3))
	f.Add("y", []byte{}, "", int64(0), uint32(60), int64(-1), []byte{9}, uint8(2), uint8(4))
	type ca struct {
		cert *x509.Certificate
		key  crypto.Signer
		is   *leafcert.Issuer
	}
	var cas []ca
	for _, c := range []struct {
		key string
		ski bool
	}{{"p256", true}, {"p256", false}, {"p384", true}, {"rsa2048", true}, {"ed25519", false}} {
		key := testkeys.Generated(c.key)
		cert := newCA(f, key, c.ski)
		is, err := leafcert.New(cert, key, rand.Reader)
		if err != nil {
			f.Fatal(err)
		}
		cas = append(cas, ca{cert, key, is})
	}
	pub := testkeys.Generated("p256-leaf").Public()
	f.Fuzz(func(t *testing.T, dns string, ip []byte, uri string, nb int64, lifetime uint32, ku int64, serial []byte, eku, caIndex uint8) {
		ca := cas[int(caIndex)%len(cas)]
		tmpl := x509.Certificate{
			SerialNumber: new(big.Int).SetBytes(serial), Subject: pkix.Name{CommonName: dns},
			NotBefore: time.Unix(nb, 0), NotAfter: time.Unix(nb, 0).Add(time.Duration(lifetime) * time.Second),
			KeyUsage: x509.KeyUsage(ku), BasicConstraintsValid: true,
		}
		for i, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageCodeSigning} {
			if eku&(1<<i) != 0 {
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, u)
			}
		}
		if dns != "" {
			tmpl.DNSNames = []string{dns}
		}
		if len(ip) > 0 {
			tmpl.IPAddresses = []net.IP{ip}
		}
		if u, err := url.Parse(uri); err == nil && uri != "" {
			tmpl.URIs = []*url.URL{u}
		}
		subject, err := marshalName(tmpl.Subject)
		if err != nil {
			return
		}
		got, err := ca.is.Issue(rand.Reader, &leafcert.Template{
			Serial: tmpl.SerialNumber, Subject: subject, NotBefore: tmpl.NotBefore, NotAfter: tmpl.NotAfter,
			PublicKey: pub, KeyUsage: tmpl.KeyUsage, ExtKeyUsage: tmpl.ExtKeyUsage,
			DNSNames: tmpl.DNSNames, IPAddresses: tmpl.IPAddresses, URIs: tmpl.URIs,
		})
		if err != nil {
			return
		}
		want, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.cert, pub, ca.key)
		require.NoError(t, err, "Issue accepted what CreateCertificate refuses")
		wantTBS, err := tbsOf(want)
		require.NoError(t, err)
		gotTBS, err := tbsOf(got)
		require.NoError(t, err)
		assert.Equal(t, wantTBS, gotTBS)
		leaf, err := x509.ParseCertificate(got)
		if err == nil {
			assert.NoError(t, leaf.CheckSignatureFrom(ca.cert), "an issued certificate that parses verifies under its CA")
		}
	})
}

// tbsOf returns a certificate's to-be-signed bytes without parsing the
// rest (CreateCertificate writes some it cannot parse back).
func tbsOf(der []byte) ([]byte, error) {
	var c struct {
		TBS asn1.RawValue
		Alg asn1.RawValue
		Sig asn1.BitString
	}
	if _, err := asn1.Unmarshal(der, &c); err != nil {
		return nil, err
	}
	return c.TBS.FullBytes, nil
}

// BenchmarkIssue compares Issue with x509.CreateCertificate for the same
// pod certificate and P-256 CA: the difference is CreateCertificate's
// verification of its own signature.
func BenchmarkIssue(b *testing.B) {
	key := testkeys.Generated("p256")
	ca := newCA(b, key, true)
	is, err := leafcert.New(ca, key, rand.Reader)
	require.NoError(b, err)
	pub := testkeys.Generated("p256-leaf").Public()
	name := pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}}
	subject, err := marshalName(name)
	require.NoError(b, err)
	spiffe := &url.URL{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/cart"}
	usages := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
	b.Run("leafcert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := is.Issue(rand.Reader, &leafcert.Template{Serial: big.NewInt(42), Subject: subject, NotBefore: t0, NotAfter: t0.Add(time.Hour),
				PublicKey: pub, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages, URIs: []*url.URL{spiffe}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x509.CreateCertificate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(42), Subject: name, NotBefore: t0, NotAfter: t0.Add(time.Hour),
				KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages, BasicConstraintsValid: true, URIs: []*url.URL{spiffe}}, ca, pub, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
