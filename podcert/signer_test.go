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
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

func TestDecideIssues(t *testing.T) {
	for _, tc := range []struct {
		name         string
		key          string
		intermediate bool
		maxSeconds   int32
		cfg          func(*podcert.Config)
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
			cfg: func(c *podcert.Config) { c.MaxLifetime = 2 * time.Hour }, wantLifetime: 2 * time.Hour, wantChain: 1},
		{name: "intermediate CA", key: "p256", intermediate: true, wantLifetime: 24 * time.Hour, wantChain: 2},
		{name: "no backdate", key: "p256", cfg: func(c *podcert.Config) { c.Backdate = -1 }, wantLifetime: 24 * time.Hour, wantChain: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := newCA(t, tc.intermediate)
			s := newSigner(t, ca, tc.cfg)
			pcr := newPCR(t, testkeys.Generated(tc.key))
			if tc.maxSeconds != 0 {
				pcr.Spec.MaxExpirationSeconds = &tc.maxSeconds
			}
			req := podcert.FromV1(pcr)
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
			v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: ca.pool(), TrustDomain: "cluster.local", Clock: fixedClock(t0)})
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

			// The status goes onto the object and passes the rules.
			obj := pcr.DeepCopy()
			require.NoError(t, d.ApplyV1(obj))
			require.Len(t, obj.Status.Conditions, 1)
			c := obj.Status.Conditions[0]
			assert.Equal(t, metav1.Condition{Type: "Issued", Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: metav1.NewTime(t0), Reason: "Issued", Message: d.Message}, c)
			require.NoError(t, podcert.CheckStatusV1(obj, pcr, t0))
			// Applying it again changes nothing; another decision cannot
			// overwrite it.
			require.NoError(t, d.ApplyV1(obj))
			d2, err := s.Decide(&req)
			require.NoError(t, err)
			assert.ErrorIs(t, d2.ApplyV1(obj), podcert.ErrInvalidStatus)
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
		mod        func(*certificatesv1.PodCertificateRequest)
		cfg        func(*podcert.Config)
		wantOut    podcert.Outcome
		wantReason string
		wantErr    error
	}{
		{name: "RSA 2048", key: "rsa2048", wantOut: podcert.Denied, wantReason: "UnsupportedKeyType", wantErr: podcert.ErrUnsupportedKey},
		{name: "P-224", key: "p224", wantOut: podcert.Denied, wantReason: "UnsupportedKeyType", wantErr: podcert.ErrUnsupportedKey},
		{name: "any annotation without a policy", key: "p256",
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "cart.shop.svc"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "unknown annotation", key: "p256", cfg: func(c *podcert.Config) { c.Policy = policy },
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{"example.com/x": "y"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "host refused by policy", key: "p256", cfg: func(c *podcert.Config) { c.Policy = policy },
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "bank.other.svc"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrAnnotation},
		{name: "malformed host", key: "p256", cfg: func(c *podcert.Config) { c.Policy = policy },
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "a..b"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: x509sa.ErrInvalidHost},
		{name: "reserved extension", key: "p256", cfg: func(c *podcert.Config) { c.Policy = policy },
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{podcert.DefaultExtensionsKey: "system:pod-name=x"}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: x509sa.ErrReservedExtension},
		{name: "oversized annotations", key: "p256", cfg: func(c *podcert.Config) { c.Policy = policy },
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: strings.Repeat("a", podcert.MaxAnnotationsSize)}
			},
			wantOut: podcert.Denied, wantReason: "InvalidUnverifiedUserAnnotations", wantErr: podcert.ErrLimit},
		{name: "stub CSR with a subject", key: "p256",
			mod: func(p *certificatesv1.PodCertificateRequest) {
				r := podcert.FromV1(p)
				der, err := x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: r.ServiceAccount()}})
				require.NoError(t, err)
				p.Spec.StubPKCS10Request = der
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "stub CSR with a bad signature", key: "p256",
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.StubPKCS10Request[len(p.Spec.StubPKCS10Request)-3] ^= 1
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrProof},
		{name: "not DER", key: "p256",
			mod:     func(p *certificatesv1.PodCertificateRequest) { p.Spec.StubPKCS10Request = []byte("garbage") },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "oversized CSR", key: "p256",
			mod: func(p *certificatesv1.PodCertificateRequest) {
				p.Spec.StubPKCS10Request = make([]byte, podcert.MaxStubPKCS10RequestSize+1)
			},
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrLimit},
		{name: "lifetime bound under an hour", key: "p256",
			mod:     func(p *certificatesv1.PodCertificateRequest) { s := int32(3599); p.Spec.MaxExpirationSeconds = &s },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: podcert.ErrInvalidRequest},
		{name: "bad pod name", key: "p256",
			mod:     func(p *certificatesv1.PodCertificateRequest) { p.Spec.PodName = "Bad!" },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: ksa.ErrInvalidName},
		{name: "no pod name", key: "p256",
			mod:     func(p *certificatesv1.PodCertificateRequest) { p.Spec.PodName = "" },
			wantOut: podcert.Failed, wantReason: "InvalidRequest", wantErr: ksa.ErrInvalidName},
		{name: "CA expires within the hour", key: "p256",
			cfg:     func(c *podcert.Config) { c.Clock = fixedClock(ca.cert.NotAfter.Add(-30 * time.Minute)) },
			wantOut: podcert.Failed, wantReason: "CAUnavailable", wantErr: podcert.ErrInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSigner(t, ca, tc.cfg)
			pcr := newPCR(t, testkeys.Generated(tc.key))
			if tc.mod != nil {
				tc.mod(pcr)
			}
			req := podcert.FromV1(pcr)
			d, err := s.Decide(&req)
			require.NoError(t, err)
			assert.Equal(t, tc.wantOut, d.Outcome)
			assert.Equal(t, tc.wantReason, d.Reason)
			assert.ErrorIs(t, d.Err, tc.wantErr)
			assert.NotEmpty(t, d.Message)
			assert.NotContains(t, d.Message, "podcert: ")
			obj := pcr.DeepCopy()
			require.NoError(t, d.ApplyV1(obj))
			assert.Empty(t, obj.Status.CertificateChain)
			assert.Nil(t, obj.Status.NotBefore)
		})
	}
}

func TestDecideServeHostsAndExtensions(t *testing.T) {
	ca := newCA(t, false)
	var seen podcert.Asked
	s := newSigner(t, ca, func(c *podcert.Config) {
		c.TrustDomain = "example.org"
		c.Policy = podcert.PolicyFunc(func(_ *podcert.Request, a podcert.Asked) error { seen = a; return nil })
	})
	pcr := newPCR(t, testkeys.Generated("p256"))
	pcr.Spec.UnverifiedUserAnnotations = map[string]string{
		podcert.DefaultServeHostsKey: "cart.shop.svc, 10.0.0.7,CART.shop.svc",
		podcert.DefaultExtensionsKey: "example.com/team=payments,zone=eu-1",
	}
	req := podcert.FromV1(pcr)
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
			pcr := newPCR(t, key)
			req := podcert.FromV1(pcr)
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
			assert.ErrorIs(t, d.Err, podcert.ErrProof)

			req.StubPKCS10Request = pcr.Spec.StubPKCS10Request
			d, err = s.Decide(&req)
			require.NoError(t, err)
			assert.Equal(t, podcert.Failed, d.Outcome, "both forms set")
		})
	}
}

func TestDecideNotThisSigner(t *testing.T) {
	s := newSigner(t, newCA(t, false), nil)
	req := podcert.FromV1(newPCR(t, testkeys.Generated("p256")))
	req.SignerName = "example.com/other"
	_, err := s.Decide(&req)
	assert.ErrorIs(t, err, podcert.ErrInvalidRequest)
	_, err = s.Decide(nil)
	assert.ErrorIs(t, err, podcert.ErrInvalidRequest)
}

type failingRand struct{}

func (failingRand) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestDecideSigningFails(t *testing.T) {
	s := newSigner(t, newCA(t, false), func(c *podcert.Config) { c.Rand = failingRand{} })
	req := podcert.FromV1(newPCR(t, testkeys.Generated("p256")))
	_, err := s.Decide(&req)
	assert.ErrorIs(t, err, podcert.ErrSigning)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestNewValidates(t *testing.T) {
	ca := newCA(t, true)
	leafKey := testkeys.Generated("p256-leaf")
	leaf := makeCert(t, &x509.Certificate{SerialNumber: ca.root.SerialNumber, NotBefore: t0, NotAfter: t0.Add(time.Hour)}, ca.cert, leafKey.Public(), ca.key)
	for _, tc := range []struct {
		name  string
		cfg   podcert.Config
		field string
	}{
		{name: "no signer name", cfg: podcert.Config{CA: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "signer name without path", cfg: podcert.Config{SignerName: "example.com", CA: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "signer name one label", cfg: podcert.Config{SignerName: "example/x", CA: ca.key, Chain: ca.chain}, field: "SignerName"},
		{name: "no CA", cfg: podcert.Config{SignerName: testSigner, Chain: ca.chain}, field: "CA"},
		{name: "no chain", cfg: podcert.Config{SignerName: testSigner, CA: ca.key}, field: "Chain"},
		{name: "nil in chain", cfg: podcert.Config{SignerName: testSigner, CA: ca.key, Chain: []*x509.Certificate{ca.cert, nil}}, field: "Chain"},
		{name: "not a CA", cfg: podcert.Config{SignerName: testSigner, CA: leafKey, Chain: []*x509.Certificate{leaf}}, field: "Chain"},
		{name: "key of another certificate", cfg: podcert.Config{SignerName: testSigner, CA: leafKey, Chain: ca.chain}, field: "CA"},
		{name: "trust domain", cfg: podcert.Config{SignerName: testSigner, CA: ca.key, Chain: ca.chain, TrustDomain: "Upper"}, field: "TrustDomain"},
		{name: "lifetime under an hour", cfg: podcert.Config{SignerName: testSigner, CA: ca.key, Chain: ca.chain, MaxLifetime: time.Minute}, field: "MaxLifetime"},
		{name: "kubernetes.io over a day", cfg: podcert.Config{SignerName: "kubernetes.io/x", CA: ca.key, Chain: ca.chain, MaxLifetime: 25 * time.Hour}, field: "MaxLifetime"},
		{name: "backdate", cfg: podcert.Config{SignerName: testSigner, CA: ca.key, Chain: ca.chain, Backdate: 5 * time.Minute}, field: "Backdate"},
		{name: "same keys", cfg: podcert.Config{SignerName: testSigner, CA: ca.key, Chain: ca.chain, ServeHostsKey: "a.b/c", ExtensionsKey: "a.b/c"}, field: "ExtensionsKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcert.New(tc.cfg)
			require.ErrorIs(t, err, podcert.ErrInvalidConfig)
			var ce *podcert.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
}

func TestTrustBundle(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	assert.Equal(t, 1, strings.Count(string(s.TrustBundle()), "BEGIN CERTIFICATE"))
	assert.Equal(t, testSigner, s.SignerName())
	req := podcert.FromV1(newPCR(t, testkeys.Generated("p256")))
	d, err := s.Decide(&req)
	require.NoError(t, err)
	// The chain carries the intermediate, not the root.
	assert.Equal(t, 2, strings.Count(d.CertificateChain, "BEGIN CERTIFICATE"))
}

func TestStatusOutcome(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "R"}
	}
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		want       podcert.Outcome
	}{
		{name: "no conditions: not decided"},
		{name: "Issued", conditions: []metav1.Condition{cond(podcert.ConditionIssued, metav1.ConditionTrue)}, want: podcert.Issued},
		{name: "Denied", conditions: []metav1.Condition{cond(podcert.ConditionDenied, metav1.ConditionTrue)}, want: podcert.Denied},
		{name: "Failed", conditions: []metav1.Condition{cond(podcert.ConditionFailed, metav1.ConditionTrue)}, want: podcert.Failed},
		{name: "False Issued: not decided", conditions: []metav1.Condition{cond(podcert.ConditionIssued, metav1.ConditionFalse)}},
		{name: "another condition type: not decided", conditions: []metav1.Condition{cond("Progressing", metav1.ConditionTrue)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, podcert.Status{Conditions: tc.conditions}.Outcome())
		})
	}
}

// TestDecisionChecksItsOwnRequest: a decision's status is checked against
// the request it is applied to, not the one it was made for, and against
// the chain it holds when applied.
func TestDecisionChecksItsOwnRequest(t *testing.T) {
	s := newSigner(t, newCA(t, false), nil)
	mine := newPCR(t, testkeys.Generated("p256"))
	req := podcert.FromV1(mine)
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome)

	other := newPCR(t, testkeys.Generated("p256-leaf"))
	err = d.ApplyV1(other)
	require.ErrorIs(t, err, podcert.ErrInvalidStatus)
	assert.ErrorContains(t, err, "the leaf was not issued to the requested key")
	assert.Empty(t, other.Status.Conditions)

	otherReq := podcert.FromV1(other)
	theirs, err := s.Decide(&otherReq)
	require.NoError(t, err)
	d.CertificateChain = theirs.CertificateChain
	err = d.ApplyV1(mine.DeepCopy())
	require.ErrorIs(t, err, podcert.ErrInvalidStatus)
	assert.ErrorContains(t, err, "the leaf was not issued to the requested key")
}

// kmsKey hides a key's type as a KMS or HSM signer does, and can be made
// to return corrupt signatures.
type kmsKey struct {
	crypto.Signer
	corrupt *bool
}

func (k kmsKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := k.Signer.Sign(r, digest, opts)
	if err == nil && *k.corrupt {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

// TestOpaqueCAIsVerified: the signature of a CA key of unknown
// implementation is verified on every certificate; one that does not
// verify is refused when the Signer is built and fails a decision later.
func TestOpaqueCAIsVerified(t *testing.T) {
	ca := newCA(t, false)
	corrupt := false
	s := newSigner(t, ca, func(c *podcert.Config) { c.CA = kmsKey{Signer: ca.key, corrupt: &corrupt} })
	req := podcert.FromV1(newPCR(t, testkeys.Generated("p256")))
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome)
	require.NoError(t, d.Leaf.CheckSignatureFrom(ca.cert))

	corrupt = true
	_, err = s.Decide(&req)
	require.ErrorIs(t, err, podcert.ErrSigning)
	assert.ErrorContains(t, err, "signature does not verify")

	_, err = podcert.New(podcert.Config{SignerName: testSigner, CA: kmsKey{Signer: ca.key, corrupt: &corrupt}, Chain: ca.chain})
	require.ErrorIs(t, err, podcert.ErrInvalidConfig)
	var ce *podcert.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "CA", ce.Field)
}
