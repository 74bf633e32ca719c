package x509sa_test

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	k8sx509 "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

// t0 is the tests' fixed "now".
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

var testSA = ksa.ServiceAccount{Namespace: "ns1", Name: "sa1", UID: "8f1c2a9e-uid"}

// ca is a self-signed test CA valid around at.
type ca struct {
	cert *x509.Certificate
	key  crypto.Signer
	pool *x509.CertPool
}

func newCA(t testing.TB, keyName string, at time.Time) *ca {
	t.Helper()
	key := testkeys.Generated(keyName)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "interop CA " + keyName},
		NotBefore: at.Add(-24 * time.Hour), NotAfter: at.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &ca{cert: cert, key: key, pool: pool}
}

func (c *ca) sign(t testing.TB, tmpl *x509.Certificate, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, pub, c.key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert
}

func (c *ca) issue(t testing.TB, opts x509sa.IssuerConfig, csr x509sa.CSROptions, keyName string) *x509sa.Issued {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedClock(t0)
	}
	opts.CA, opts.Key = c.cert, c.key
	is, err := x509sa.NewIssuer(opts)
	require.NoError(t, err)
	der, err := x509sa.CreateCSR(nil, testkeys.Generated(keyName), csr)
	require.NoError(t, err)
	issued, err := is.Issue(x509sa.IssueRequest{CSR: der})
	require.NoError(t, err)
	return issued
}

// kubeAuthenticate runs kube-apiserver's x509 authenticator, as
// pkg/kubeapiserver/authenticator wires it, on a presented chain.
func kubeAuthenticate(roots *x509.CertPool, at time.Time, chain ...*x509.Certificate) (*authenticator.Response, bool, error) {
	opts := k8sx509.DefaultVerifyOptions()
	opts.Roots = roots
	opts.CurrentTime = at
	a := k8sx509.New(opts, k8sx509.CommonNameUserConversion)
	req := &http.Request{TLS: &tls.ConnectionState{PeerCertificates: chain}}
	return a.AuthenticateRequest(req)
}

// ours verifies the same chain for client auth.
func ours(t testing.TB, roots *x509.CertPool, at time.Time, chain ...*x509.Certificate) (*x509sa.Certificate, error) {
	t.Helper()
	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: roots, Usage: x509sa.ClientAuth, Now: fixedClock(at)})
	require.NoError(t, err)
	return v.Verify(chain)
}

// requireSameUser compares Kubernetes' user with x509sa's, groups as sets.
func requireSameUser(t *testing.T, kube user.Info, got ksa.UserInfo) {
	t.Helper()
	assert.Equal(t, kube.GetName(), got.Username, "name")
	assert.Equal(t, kube.GetUID(), got.UID, "uid")
	assert.ElementsMatch(t, kube.GetGroups(), got.Groups, "groups")
	assert.Equal(t, kube.GetExtra(), got.Extra, "extra")
}

// TestAuthenticatorAgrees issues certificates with x509sa and authenticates
// them with kube-apiserver's x509 authenticator: the user is the one x509sa
// decodes, for every subject shape and key type.
func TestAuthenticatorAgrees(t *testing.T) {
	c := newCA(t, "p256-ca", t0)
	subjects := []struct {
		name string
		csr  x509sa.CSROptions
		opts x509sa.IssuerConfig
	}{
		{name: "service account", csr: x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "ns1", Name: "sa1"}}}},
		{name: "with UID", csr: x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}}},
		{name: "UID with underscore", csr: x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "ns1", Name: "sa1", UID: "uid_with_underscore"}}}},
		{name: "pod and extensions (OU, ignored by Kubernetes)", csr: x509sa.CSROptions{Subject: x509sa.Subject{
			ServiceAccount: testSA, PodName: "web-0", Extensions: map[string]string{"example.com/team": "a", "zone": "eu-1"},
		}}},
		{name: "X509-SVID with hosts", opts: x509sa.IssuerConfig{Usages: x509sa.ClientAndServerAuth}, csr: x509sa.CSROptions{
			Subject: x509sa.Subject{ServiceAccount: testSA}, Usage: x509sa.ClientAndServerAuth,
			TrustDomain: "cluster.local", Hosts: []string{"web.ns1.svc", "10.0.0.7"},
		}},
		{name: "dotted name", csr: x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: "a.b-c"}}}},
	}
	keys := []string{"p256", "p384", "p521", "ed25519", "rsa2048", "rsa3072"}
	for _, s := range subjects {
		for _, k := range keys {
			t.Run(s.name+"/"+k, func(t *testing.T) {
				issued := c.issue(t, s.opts, s.csr, k)
				resp, ok, err := kubeAuthenticate(c.pool, t0, issued.Leaf)
				require.NoError(t, err)
				require.True(t, ok)
				got, err := ours(t, c.pool, t0, issued.Leaf)
				require.NoError(t, err)
				requireSameUser(t, resp.User, got.UserInfo())
				assert.Equal(t, got.CredentialID, resp.User.GetExtra()[user.CredentialIDKey][0])
			})
		}
	}
}

// rawSubject marshals an RDN sequence, for subjects pkix.Name cannot
// express (repeated CNs, multi-valued RDNs mixing types).
func rawSubject(t *testing.T, rdns ...pkix.RelativeDistinguishedNameSET) []byte {
	t.Helper()
	der, err := asn1.Marshal(pkix.RDNSequence(rdns))
	require.NoError(t, err)
	return der
}

var (
	oidCN  = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidO   = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidUID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 2}
)

func rdn(atvs ...pkix.AttributeTypeAndValue) pkix.RelativeDistinguishedNameSET { return atvs }
func atv(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: v}
}

// TestConformance runs the cases of the x509 authenticator's tests
// (k8s.io/apiserver/pkg/authentication/request/x509) that apply, and the
// subject encodings of Go's crypto/x509/pkix, through both Kubernetes'
// authenticator and x509sa. Where Kubernetes
// accepts and x509sa refuses, the refusal is deliberate (fail closed) and
// named in the case.
func TestConformance(t *testing.T) {
	c := newCA(t, "p256-ca", t0)
	other := newCA(t, "p256-other", t0)
	key := testkeys.Generated("p256")
	saName, err := x509sa.Subject{ServiceAccount: testSA}.Name()
	require.NoError(t, err)
	tmpl := func(mut func(*x509.Certificate)) *x509.Certificate {
		tm := &x509.Certificate{
			SerialNumber: big.NewInt(7), Subject: saName,
			NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			BasicConstraintsValid: true,
		}
		if mut != nil {
			mut(tm)
		}
		return tm
	}
	leaf := func(mut func(*x509.Certificate)) []*x509.Certificate {
		return []*x509.Certificate{c.sign(t, tmpl(mut), key.Public())}
	}
	interKey := testkeys.Generated("p384-inter")
	inter := c.sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(8), Subject: pkix.Name{CommonName: "intermediate"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}, interKey.Public())
	interCA := &ca{cert: inter, key: interKey}
	spiffe, _ := url.Parse("spiffe://cluster.local/ns/ns1/sa/sa1")
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:ns1"}

	type kubeWant int
	const (
		kubeUser kubeWant = iota
		kubeNoOpinion
		kubeError
	)
	tests := []struct {
		name     string
		chain    []*x509.Certificate
		at       time.Time
		kube     kubeWant
		kubeName string // when kube accepts and ours refuses
		oursErr  error  // nil: ours accepts and must agree with kube
	}{
		{name: "unknown authority", chain: []*x509.Certificate{other.sign(t, tmpl(nil), key.Public())}, kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "server-auth leaf for a client", chain: leaf(func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} }), kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "empty UID", chain: leaf(func(c *x509.Certificate) {
			c.Subject.ExtraNames = []pkix.AttributeTypeAndValue{atv(oidUID, "")}
		}), kube: kubeError, oursErr: x509sa.ErrInvalidSubject},
		{name: "two UIDs", chain: leaf(func(c *x509.Certificate) {
			c.Subject.ExtraNames = []pkix.AttributeTypeAndValue{atv(oidUID, "a"), atv(oidUID, "b")}
		}), kube: kubeError, oursErr: x509sa.ErrInvalidSubject},
		{name: "extra groups (x509sa refuses)", chain: leaf(func(c *x509.Certificate) {
			c.Subject.Organization = append(c.Subject.Organization, "My Org", "system:masters")
		}), kube: kubeUser, kubeName: testSA.Username(), oursErr: x509sa.ErrInvalidSubject},
		{name: "not yet valid", chain: leaf(nil), at: t0.Add(-100 * 365 * 24 * time.Hour), kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "expired", chain: leaf(nil), at: t0.Add(100 * 365 * 24 * time.Hour), kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "leaf and intermediate presented", chain: []*x509.Certificate{interCA.sign(t, tmpl(nil), key.Public()), inter}, kube: kubeUser},
		{name: "intermediate missing", chain: []*x509.Certificate{interCA.sign(t, tmpl(nil), key.Public())}, kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "no EKU (x509sa refuses)", chain: leaf(func(c *x509.Certificate) { c.ExtKeyUsage = nil }), kube: kubeUser, kubeName: testSA.Username(), oursErr: x509sa.ErrInvalidCertificate},
		{name: "empty subject with SPIFFE URI", chain: leaf(func(c *x509.Certificate) {
			c.Subject = pkix.Name{}
			c.URIs = []*url.URL{spiffe}
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
		}), kube: kubeNoOpinion, oursErr: x509sa.ErrNotServiceAccount},
		{name: "service-account subject", chain: leaf(nil), kube: kubeUser},
		{name: "multi-valued RDN", chain: leaf(func(c *x509.Certificate) {
			c.RawSubject = rawSubject(t, rdn(atv(oidO, groups[0]), atv(oidCN, testSA.Username()), atv(oidO, groups[1])), rdn(atv(oidUID, testSA.UID)))
		}), kube: kubeUser},
		{name: "user in a multi-valued RDN", chain: leaf(func(c *x509.Certificate) {
			c.RawSubject = rawSubject(t, rdn(atv(oidO, "g1"), atv(oidCN, "user")))
		}), kube: kubeUser, kubeName: "user", oursErr: x509sa.ErrNotServiceAccount},
		{name: "unknown non-critical extension", chain: leaf(func(c *x509.Certificate) {
			c.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 1}, Value: []byte{0x05, 0x00}}}
		}), kube: kubeUser},
		{name: "unknown critical extension", chain: leaf(func(c *x509.Certificate) {
			c.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 1}, Critical: true, Value: []byte{0x05, 0x00}}}
		}), kube: kubeError, oursErr: x509sa.ErrUntrusted},
		{name: "groups written in reverse", chain: leaf(func(c *x509.Certificate) {
			c.Subject.Organization = []string{groups[1], groups[0]}
		}), kube: kubeUser},
		{name: "two CNs, service account last (x509sa refuses)", chain: leaf(func(c *x509.Certificate) {
			c.RawSubject = rawSubject(t, rdn(atv(oidCN, "alice")), rdn(atv(oidO, groups[0]), atv(oidO, groups[1])), rdn(atv(oidCN, testSA.Username())))
		}), kube: kubeUser, kubeName: testSA.Username(), oursErr: x509sa.ErrInvalidSubject},
		{name: "user certificate", chain: leaf(func(c *x509.Certificate) {
			c.Subject = pkix.Name{CommonName: "alice", Organization: []string{"system:masters"}}
		}),
			kube: kubeUser, kubeName: "alice", oursErr: x509sa.ErrNotServiceAccount},
		{name: "service-account CN without groups (x509sa refuses)", chain: leaf(func(c *x509.Certificate) { c.Subject = pkix.Name{CommonName: testSA.Username()} }),
			kube: kubeUser, kubeName: testSA.Username(), oursErr: x509sa.ErrInvalidSubject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := tt.at
			if at.IsZero() {
				at = t0
			}
			resp, ok, kerr := kubeAuthenticate(c.pool, at, tt.chain...)
			switch tt.kube {
			case kubeError:
				require.Error(t, kerr)
				require.False(t, ok)
			case kubeNoOpinion:
				require.NoError(t, kerr)
				require.False(t, ok)
			case kubeUser:
				require.NoError(t, kerr)
				require.True(t, ok)
			}
			got, err := ours(t, c.pool, at, tt.chain...)
			if tt.oursErr != nil {
				require.ErrorIs(t, err, tt.oursErr)
				if tt.kube == kubeUser {
					assert.Equal(t, tt.kubeName, resp.User.GetName())
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, kubeUser, tt.kube)
			requireSameUser(t, resp.User, got.UserInfo())
		})
	}
}

// TestUIDFeatureGate: with AllowParsingUserUIDFromCertAuth off
// (before 1.33, or disabled) Kubernetes ignores the UID attribute; x509sa
// always reads it.
func TestUIDFeatureGate(t *testing.T) {
	c := newCA(t, "p256-ca", t0)
	issued := c.issue(t, x509sa.IssuerConfig{}, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}}, "p256")

	resp, ok, err := kubeAuthenticate(c.pool, t0, issued.Leaf)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, testSA.UID, resp.User.GetUID(), "gate on by default in 1.36")

	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowParsingUserUIDFromCertAuth, false)
	resp, ok, err = kubeAuthenticate(c.pool, t0, issued.Leaf)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, resp.User.GetUID())
	got, err := ours(t, c.pool, t0, issued.Leaf)
	require.NoError(t, err)
	assert.Equal(t, testSA.UID, got.Subject.ServiceAccount.UID)
}
