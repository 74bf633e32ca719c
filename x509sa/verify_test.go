package x509sa_test

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"net"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

func TestVerify(t *testing.T) {
	ca := newCA(t, "p256-ca")
	other := newCA(t, "p256-other")
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}
	spiffeURI, err := url.Parse("spiffe://cluster.local/ns/shop/sa/cart")
	require.NoError(t, err)

	// leaf signs a variant of the well-formed template.
	leaf := func(c *testCA, mut func(*x509.Certificate)) *x509.Certificate {
		tmpl := leafTemplate(t, sub)
		if mut != nil {
			mut(tmpl)
		}
		return c.sign(t, tmpl, key.Public())
	}
	tests := []struct {
		name    string
		chain   []*x509.Certificate
		opts    x509sa.VerifierConfig
		wantErr []error
	}{
		{name: "client", chain: []*x509.Certificate{leaf(ca, nil)}},
		{name: "server with host check", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			c.DNSNames = []string{"cart.shop.svc"}
		})}, opts: x509sa.VerifierConfig{Usage: x509sa.ServerAuth, DNSName: "cart.shop.svc"}},
		{name: "X509-SVID in the trust domain", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
			c.URIs = []*url.URL{spiffeURI}
		})}, opts: x509sa.VerifierConfig{TrustDomain: "cluster.local"}},
		{name: "unknown non-critical extension", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 1}, Value: []byte{0x05, 0x00}}}
		})}},

		{name: "empty chain", chain: nil, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "nil in chain", chain: []*x509.Certificate{leaf(ca, nil), nil}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "chain of 9", chain: make([]*x509.Certificate, 9), wantErr: []error{x509sa.ErrLimit}},
		{name: "unknown authority", chain: []*x509.Certificate{leaf(other, nil)}, wantErr: []error{x509sa.ErrUntrusted, x509.UnknownAuthorityError{}}},
		{name: "server-only leaf for a client", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		})}, wantErr: []error{x509sa.ErrUntrusted, x509.CertificateInvalidError{}}},
		{name: "expired", chain: []*x509.Certificate{leaf(ca, nil)}, opts: x509sa.VerifierConfig{Now: fixedClock(t0.Add(2 * time.Hour))}, wantErr: []error{x509sa.ErrUntrusted, x509.CertificateInvalidError{}}},
		{name: "not yet valid", chain: []*x509.Certificate{leaf(ca, nil)}, opts: x509sa.VerifierConfig{Now: fixedClock(t0.Add(-2 * time.Hour))}, wantErr: []error{x509sa.ErrUntrusted}},
		{name: "unknown critical extension", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 1}, Critical: true, Value: []byte{0x05, 0x00}}}
		})}, wantErr: []error{x509sa.ErrUntrusted}},
		{name: "wrong host", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			c.DNSNames = []string{"cart.shop.svc"}
		})}, opts: x509sa.VerifierConfig{Usage: x509sa.ServerAuth, DNSName: "admin.shop.svc"}, wantErr: []error{x509sa.ErrUntrusted, x509.HostnameError{}}},
		{name: "no EKU (Go and Kubernetes accept it)", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.ExtKeyUsage = nil })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "any EKU", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageAny} })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "code signing too", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageCodeSigning}
		})}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "unknown EKU", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.UnknownExtKeyUsage = []asn1.ObjectIdentifier{{1, 2, 3}}
		})}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "CA leaf", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.IsCA = true; c.KeyUsage |= x509.KeyUsageCertSign })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "no digital signature", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageKeyEncipherment })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "cert sign", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.KeyUsage |= x509.KeyUsageCertSign })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "user subject", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.Subject = pkix.Name{CommonName: "alice"} })}, wantErr: []error{x509sa.ErrNotServiceAccount}},
		{name: "system:masters added", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.Subject.Organization = append(c.Subject.Organization, "system:masters")
		})}, wantErr: []error{x509sa.ErrInvalidSubject}},
		{name: "e-mail SAN", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.EmailAddresses = []string{"a@b.c"} })}, wantErr: []error{x509sa.ErrInvalidCertificate, x509sa.ErrInvalidHost}},
		{name: "unspecified IP SAN", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			c.IPAddresses = []net.IP{net.IPv6zero}
		})}, opts: x509sa.VerifierConfig{Usage: x509sa.ServerAuth}, wantErr: []error{x509sa.ErrInvalidHost}},
		{name: "SVID with client auth only", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) { c.URIs = []*url.URL{spiffeURI} })}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "SPIFFE ID of another account", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
			c.URIs = []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/admin"}}
		})}, wantErr: []error{x509sa.ErrInvalidCertificate, x509sa.ErrInvalidSPIFFEID}},
		{name: "trust domain required", chain: []*x509.Certificate{leaf(ca, nil)}, opts: x509sa.VerifierConfig{TrustDomain: "cluster.local"}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "other trust domain", chain: []*x509.Certificate{leaf(ca, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
			c.URIs = []*url.URL{spiffeURI}
		})}, opts: x509sa.VerifierConfig{TrustDomain: "other.local"}, wantErr: []error{x509sa.ErrInvalidCertificate}},
		{name: "weak leaf key", chain: []*x509.Certificate{ca.sign(t, leafTemplate(t, sub), testkeys.Generated("rsa1024").Public())}, wantErr: []error{x509sa.ErrInvalidCertificate, jwks.ErrUnsupportedKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Roots = ca.pool
			if opts.Now == nil {
				opts.Now = fixedClock(t0)
			}
			v, err := x509sa.NewVerifier(opts)
			require.NoError(t, err)
			got, err := v.Verify(tt.chain)
			if tt.wantErr != nil {
				for _, want := range tt.wantErr {
					switch w := want.(type) {
					case x509.UnknownAuthorityError:
						require.ErrorAs(t, err, &w)
					case x509.CertificateInvalidError:
						require.ErrorAs(t, err, &w)
					case x509.HostnameError:
						require.ErrorAs(t, err, &w)
					default:
						require.ErrorIs(t, err, want)
					}
				}
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.chain[0], got.Leaf)
			assert.True(t, got.Subject.Equal(sub))
			assert.NotEmpty(t, got.Chains)
		})
	}
}

func TestVerifiedIdentity(t *testing.T) {
	ca := newCA(t, "p256-ca")
	is := ca.issuer(t, x509sa.IssuerConfig{})
	issued, err := is.Issue(x509sa.IssueRequest{CSR: mustCSR(t, testkeys.Generated("p384"), x509sa.CSROptions{
		Subject: x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"},
	})})
	require.NoError(t, err)
	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: ca.pool, Now: fixedClock(t0)})
	require.NoError(t, err)
	cert, err := v.Verify([]*x509.Certificate{issued.Leaf})
	require.NoError(t, err)

	sum := sha256.Sum256(issued.Leaf.Raw)
	wantID := "X509SHA256=" + hex.EncodeToString(sum[:])
	assert.Equal(t, wantID, cert.CredentialID)
	assert.Equal(t, wantID, x509sa.CredentialID(issued.Leaf))
	assert.Regexp(t, regexp.MustCompile(`^X509SHA256=[0-9a-f]{64}$`), cert.CredentialID)
	assert.Equal(t, ksa.Identity{ServiceAccount: testSA, Pod: ksa.ObjectRef{Name: "cart-0"}, CredentialID: wantID}, cert.Identity())
	// What kube-apiserver's x509 authenticator returns for this certificate
	// (the interop tests run the real one).
	assert.Equal(t, ksa.UserInfo{
		Username: "system:serviceaccount:shop:cart",
		UID:      testSA.UID,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:shop"},
		Extra:    map[string][]string{ksa.ExtraCredentialID: {wantID}},
	}, cert.UserInfo())
	assert.Equal(t, x509sa.ClientAuth, cert.Usage)

	decoded, err := x509sa.DecodeCertificate(issued.Leaf)
	require.NoError(t, err)
	assert.Nil(t, decoded.Chains)
	assert.Equal(t, cert.Identity(), decoded.Identity())

	_, err = x509sa.DecodeCertificate(nil)
	require.ErrorIs(t, err, x509sa.ErrInvalidCertificate)
}

func TestVerifyIntermediates(t *testing.T) {
	root := newCA(t, "p256-root")
	interKey := testkeys.Generated("p384-inter")
	inter := root.sign(t, &x509.Certificate{
		SerialNumber: serial(7), Subject: pkix.Name{CommonName: "intermediate"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}, interKey.Public())
	interCA := &testCA{cert: inter, key: interKey}
	leaf := interCA.sign(t, leafTemplate(t, x509sa.Subject{ServiceAccount: testSA}), testkeys.Generated("p256").Public())

	presented, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: root.pool, Now: fixedClock(t0)})
	require.NoError(t, err)
	_, err = presented.Verify([]*x509.Certificate{leaf, inter})
	require.NoError(t, err, "intermediate taken from the presented chain")
	_, err = presented.Verify([]*x509.Certificate{leaf})
	require.ErrorIs(t, err, x509sa.ErrUntrusted)

	pinned := x509.NewCertPool()
	pinned.AddCert(inter)
	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: root.pool, Intermediates: pinned, Now: fixedClock(t0)})
	require.NoError(t, err)
	_, err = v.Verify([]*x509.Certificate{leaf})
	require.NoError(t, err)

	empty, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: root.pool, Intermediates: x509.NewCertPool(), Now: fixedClock(t0)})
	require.NoError(t, err)
	_, err = empty.Verify([]*x509.Certificate{leaf, inter})
	require.ErrorIs(t, err, x509sa.ErrUntrusted, "a pinned pool replaces the presented intermediates")
}

func TestNewVerifierOptions(t *testing.T) {
	pool := x509.NewCertPool()
	tests := []struct {
		name    string
		opts    x509sa.VerifierConfig
		wantErr error
	}{
		{name: "roots only", opts: x509sa.VerifierConfig{Roots: pool}},
		{name: "server", opts: x509sa.VerifierConfig{Roots: pool, Usage: x509sa.ServerAuth}},
		{name: "no roots", opts: x509sa.VerifierConfig{}, wantErr: ksa.ErrInvalidConfig},
		{name: "both usages", opts: x509sa.VerifierConfig{Roots: pool, Usage: x509sa.ClientAndServerAuth}, wantErr: ksa.ErrInvalidConfig},
		{name: "unknown usage", opts: x509sa.VerifierConfig{Roots: pool, Usage: 4}, wantErr: ksa.ErrInvalidConfig},
		{name: "bad trust domain", opts: x509sa.VerifierConfig{Roots: pool, TrustDomain: "Bad"}, wantErr: x509sa.ErrInvalidSPIFFEID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := x509sa.NewVerifier(tt.opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, v)
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestCheckLeaf: CheckLeaf checks what Verify checks of the leaf (usage,
// identity, trust domain) and nothing of the chain: another CA's leaf, or
// an expired one, passes it, since crypto/tls verified the chain.
func TestCheckLeaf(t *testing.T) {
	ca, other := newCA(t, "p256-ca"), newCA(t, "p256-other")
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}
	svid := func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
		c.URIs = []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/cart"}}
	}
	leaf := func(c *testCA, mut func(*x509.Certificate)) *x509.Certificate {
		tmpl := leafTemplate(t, sub)
		mut(tmpl)
		return c.sign(t, tmpl, key.Public())
	}
	for _, tc := range []struct {
		name    string
		leaf    *x509.Certificate
		opts    x509sa.VerifierConfig
		wantErr error
	}{
		{name: "an X509-SVID", leaf: leaf(ca, svid), opts: x509sa.VerifierConfig{TrustDomain: "cluster.local"}},
		{name: "another CA's leaf (the chain is not checked)", leaf: leaf(other, svid)},
		{name: "server auth only, for a client", leaf: leaf(ca, func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} }), wantErr: x509sa.ErrInvalidCertificate},
		{name: "other trust domain", leaf: leaf(ca, svid), opts: x509sa.VerifierConfig{TrustDomain: "other.local"}, wantErr: x509sa.ErrInvalidCertificate},
		{name: "not an identity", leaf: leaf(ca, func(c *x509.Certificate) { c.Subject = pkix.Name{CommonName: "alice"} }), wantErr: x509sa.ErrNotServiceAccount},
		{name: "nil", wantErr: x509sa.ErrInvalidCertificate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Roots = ca.pool
			v, err := x509sa.NewVerifier(opts)
			require.NoError(t, err)
			got, err := v.CheckLeaf(tc.leaf)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "cart", got.Subject.ServiceAccount.Name)
			assert.Nil(t, got.Chains)
		})
	}
}
