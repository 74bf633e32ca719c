package podcert_test

import (
	"crypto"
	"crypto/x509"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

func TestDecideIssues(t *testing.T) {
	for _, tc := range []struct {
		name         string
		key          string
		intermediate bool
		maxSeconds   int32
		cfg          func(*podcert.SignerConfig)
		wantLifetime time.Duration
		wantChain    int
	}{
		{name: "P-256, default lifetime", key: "p256", wantLifetime: 24 * time.Hour, wantChain: 1},
		{name: "P-384", key: "p384", wantLifetime: 24 * time.Hour, wantChain: 1},
		{name: "P-521", key: "p521", wantLifetime: 24 * time.Hour, wantChain: 1},
		{name: "Ed25519", key: "ed25519", wantLifetime: 24 * time.Hour, wantChain: 1},
		{name: "RSA 3072", key: "rsa3072", wantLifetime: 24 * time.Hour, wantChain: 1},
		{name: "one hour asked", key: "p256", maxSeconds: 3600, wantLifetime: time.Hour, wantChain: 1},
		{name: "signer cap under the request", key: "p256", maxSeconds: 7 * 86400,
			cfg: func(c *podcert.SignerConfig) { c.MaxLifetime = 2 * time.Hour }, wantLifetime: 2 * time.Hour, wantChain: 1},
		{name: "intermediate CA", key: "p256", intermediate: true, wantLifetime: 24 * time.Hour, wantChain: 2},
		{name: "no backdate", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Backdate = -1 }, wantLifetime: 24 * time.Hour, wantChain: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := newCA(t, tc.intermediate)
			s := newSigner(t, ca, tc.cfg)
			req := newRequest(t, testkeys.Generated(tc.key))
			if tc.maxSeconds != 0 {
				req.MaxExpirationSeconds = tc.maxSeconds
			}
			d, err := s.Decide(&req)
			require.NoError(t, err)
			require.Equal(t, podcert.Issued, d.Outcome, d.Message)
			assert.Equal(t, podcert.ReasonIssued, d.Reason)
			assert.Equal(t, tc.wantLifetime, d.NotAfter.Sub(d.NotBefore))
			assert.Equal(t, d.NotBefore.Add(tc.wantLifetime/2), d.BeginRefreshAt)
			assert.Equal(t, strings.Count(d.CertificateChain, "BEGIN CERTIFICATE"), tc.wantChain)
			assert.WithinDuration(t, t0, d.NotBefore, podcert.DefaultBackdate)

			// The leaf carries the identity x509sa reads, verifies under the
			// root for both usages, and is the request's key.
			v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: ca.pool(), TrustDomain: "cluster.local", Now: fixedClock(t0)})
			require.NoError(t, err)
			chain := []*x509.Certificate{d.Leaf}
			if tc.intermediate {
				chain = append(chain, ca.cert)
			}
			cert, err := v.Verify(chain)
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:shop:cart", cert.Subject.ServiceAccount.Username())
			assert.Equal(t, "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60", cert.Subject.ServiceAccount.UID)
			assert.Equal(t, "cart-7d9f", cert.Subject.PodName)
			assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", cert.SPIFFEID.String())
			assert.Equal(t, x509sa.ClientAndServerAuth, cert.Usage)
			assert.True(t, d.Leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(testkeys.Generated(tc.key).Public()))

			// The status passes the rules.
			st := d.Status()
			require.Len(t, st.Conditions, 1)
			c := st.Conditions[0]
			assert.Equal(t, podcert.Condition{Type: "Issued", Status: podcert.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: t0, Reason: "Issued", Message: d.Message}, c)
			require.NoError(t, podcert.CheckStatus(&req, podcert.Status{}, st, t0))
			// Setting it again changes nothing; another decision cannot
			// overwrite it.
			require.NoError(t, podcert.CheckStatus(&req, st, st, t0))
			d2, err := s.Decide(&req)
			require.NoError(t, err)
			assert.ErrorIs(t, podcert.CheckStatus(&req, st, d2.Status(), t0), podcert.ErrInvalidStatus)
		})
	}
}

func TestDecideRefuses(t *testing.T) {
	ca := newCA(t, false)
	policy := podcert.PolicyFunc(func(r *podcert.Request, a podcert.Asked) error {
		for _, h := range a.DNSNames {
			if !strings.HasSuffix(h, "."+r.Namespace+".svc") {
				return errors.New("host " + h + " is outside the namespace")
			}
		}
		return nil
	})
	for _, tc := range []struct {
		name       string
		key        string
		mod        func(*podcert.Request)
		cfg        func(*podcert.SignerConfig)
		wantOut    podcert.Outcome
		wantReason string
		wantErr    error
		wantText   string
	}{
		{name: "RSA 2048", key: "rsa2048", wantOut: podcert.Denied, wantReason: "UnsupportedKeyType", wantErr: jwks.ErrUnsupportedKey},
		{name: "P-224", key: "p224", wantOut: podcert.Denied, wantReason: "UnsupportedKeyType", wantErr: jwks.ErrUnsupportedKey},
		{name: "any annotation without a policy", key: "p256",
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "cart.shop.svc"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "unknown annotation", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Policy = policy },
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{"example.com/x": "y"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "host refused by policy", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Policy = policy },
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "bank.other.svc"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "malformed host", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Policy = policy },
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "a..b"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: x509sa.ErrInvalidHost},
		{name: "reserved extension", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Policy = policy },
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{podcert.DefaultExtensionsKey: "system:pod-name=x"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: x509sa.ErrReservedExtension},
		{name: "oversized annotations", key: "p256", cfg: func(c *podcert.SignerConfig) { c.Policy = policy },
			mod: func(p *podcert.Request) {
				p.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: strings.Repeat("a", podcert.MaxAnnotationsSize)}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrLimit},
		{name: "stub CSR with a subject", key: "p256",
			mod: func(p *podcert.Request) {
				der, err := x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: p.ServiceAccount()}})
				require.NoError(t, err)
				p.StubPKCS10Request = der
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "stub CSR with a bad signature", key: "p256",
			mod: func(p *podcert.Request) {
				p.StubPKCS10Request[len(p.StubPKCS10Request)-3] ^= 1
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest, wantText: "signature does not verify"},
		{name: "not DER", key: "p256",
			mod:     func(p *podcert.Request) { p.StubPKCS10Request = []byte("garbage") },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "oversized CSR", key: "p256",
			mod: func(p *podcert.Request) {
				p.StubPKCS10Request = make([]byte, podcert.MaxStubPKCS10RequestSize+1)
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrLimit},
		{name: "lifetime bound under an hour", key: "p256",
			mod:     func(p *podcert.Request) { s := int32(3599); p.MaxExpirationSeconds = s },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "bad pod name", key: "p256",
			mod:     func(p *podcert.Request) { p.PodName = "Bad!" },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: ksa.ErrInvalidName},
		{name: "no pod name", key: "p256",
			mod:     func(p *podcert.Request) { p.PodName = "" },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: ksa.ErrInvalidName},
		{name: "CA expires within the hour", key: "p256",
			cfg:     func(c *podcert.SignerConfig) { c.Now = fixedClock(ca.cert.NotAfter.Add(-30 * time.Minute)) },
			wantOut: podcert.Failed, wantReason: "CAUnavailable", wantErr: podcert.ErrInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSigner(t, ca, tc.cfg)
			req := newRequest(t, testkeys.Generated(tc.key))
			if tc.mod != nil {
				tc.mod(&req)
			}
			d, err := s.Decide(&req)
			require.NoError(t, err)
			assert.Equal(t, tc.wantOut, d.Outcome)
			assert.Equal(t, tc.wantReason, d.Reason)
			assert.ErrorIs(t, d.Err, tc.wantErr)
			assert.NotEmpty(t, d.Message)
			assert.Contains(t, d.Message, tc.wantText)
			assert.NotContains(t, d.Message, "podcert: ")
			st := d.Status()
			require.NoError(t, podcert.CheckStatus(&req, podcert.Status{}, st, d.At))
			assert.Empty(t, st.CertificateChain)
			assert.Nil(t, st.NotBefore)
		})
	}
}

func TestDecideServeHostsAndExtensions(t *testing.T) {
	ca := newCA(t, false)
	var seen podcert.Asked
	s := newSigner(t, ca, func(c *podcert.SignerConfig) {
		c.TrustDomain = "example.org"
		c.Policy = podcert.PolicyFunc(func(_ *podcert.Request, a podcert.Asked) error { seen = a; return nil })
	})
	req := newRequest(t, testkeys.Generated("p256"))
	req.UnverifiedUserAnnotations = map[string]string{
		podcert.DefaultServeHostsKey: "cart.shop.svc, 10.0.0.7,CART.shop.svc",
		podcert.DefaultExtensionsKey: "example.com/team=payments,zone=eu-1",
	}
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome, d.Message)
	assert.Equal(t, []string{"cart.shop.svc", "10.0.0.7"}, seen.Hosts())
	assert.Equal(t, []string{"cart.shop.svc"}, d.Leaf.DNSNames)
	assert.Equal(t, "10.0.0.7", d.Leaf.IPAddresses[0].String())
	assert.Equal(t, "spiffe://example.org/ns/shop/sa/cart", d.Leaf.URIs[0].String())
	cert, err := x509sa.DecodeCertificate(d.Leaf)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"example.com/team": "payments", "zone": "eu-1"}, cert.Subject.Extensions)
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("10.0.0.7")}, cert.IPAddresses)
}

func TestDecideOlderProof(t *testing.T) {
	ca := newCA(t, false)
	s := newSigner(t, ca, nil)
	for _, name := range []string{"p256", "p384", "ed25519", "rsa3072"} {
		t.Run(name, func(t *testing.T) {
			key := testkeys.Generated(name)
			req := newRequest(t, key)
			stub := req.StubPKCS10Request
			req.StubPKCS10Request = nil
			var err error
			req.PKIXPublicKey, err = x509.MarshalPKIXPublicKey(key.Public())
			require.NoError(t, err)
			req.ProofOfPossession = proof(t, key, req.PodUID)
			d, err := s.Decide(&req)
			require.NoError(t, err)
			require.Equal(t, podcert.Issued, d.Outcome, d.Message)

			req.ProofOfPossession = proof(t, key, "another pod")
			d, err = s.Decide(&req)
			require.NoError(t, err)
			assert.Equal(t, podcert.Failed, d.Outcome)
			assert.ErrorIs(t, d.Err, podcert.ErrInvalidRequest)
			assert.ErrorContains(t, d.Err, "does not verify")

			req.StubPKCS10Request = stub
			d, err = s.Decide(&req)
			require.NoError(t, err)
			assert.Equal(t, podcert.Failed, d.Outcome, "both forms set")
		})
	}
}

func TestDecideNotThisSigner(t *testing.T) {
	s := newSigner(t, newCA(t, false), nil)
	req := newRequest(t, testkeys.Generated("p256"))
	req.SignerName = "example.com/other"
	_, err := s.Decide(&req)
	assert.ErrorIs(t, err, podcert.ErrInvalidRequest)
	_, err = s.Decide(nil)
	assert.ErrorIs(t, err, podcert.ErrInvalidRequest)
}

type failingRand struct{}

func (failingRand) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestDecideSigningFails(t *testing.T) {
	s := newSigner(t, newCA(t, false), func(c *podcert.SignerConfig) { c.Rand = failingRand{} })
	req := newRequest(t, testkeys.Generated("p256"))
	_, err := s.Decide(&req)
	assert.ErrorIs(t, err, podcert.ErrSigning)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// TestDecisionChecksItsOwnRequest: a decision's status is checked against
// the request it is applied to, not the one it was made for, and against
// the chain it holds when applied.
func TestDecisionChecksItsOwnRequest(t *testing.T) {
	s := newSigner(t, newCA(t, false), nil)
	req := newRequest(t, testkeys.Generated("p256"))
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome)

	otherReq := newRequest(t, testkeys.Generated("p256-leaf"))
	err = podcert.CheckStatus(&otherReq, podcert.Status{}, d.Status(), d.At)
	require.ErrorIs(t, err, podcert.ErrInvalidStatus)
	assert.ErrorContains(t, err, "the leaf was not issued to the requested key")

	theirs, err := s.Decide(&otherReq)
	require.NoError(t, err)
	d.CertificateChain = theirs.CertificateChain
	err = podcert.CheckStatus(&req, podcert.Status{}, d.Status(), d.At)
	require.ErrorIs(t, err, podcert.ErrInvalidStatus)
	assert.ErrorContains(t, err, "the leaf was not issued to the requested key")
}
