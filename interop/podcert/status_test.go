package podcert_test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/certificates"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	"k8s.io/kubernetes/pkg/apis/certificates/validation"
	testclock "k8s.io/utils/clock/testing"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const signerName = "example.com/workload"

type fixture struct {
	caCert *x509.Certificate
	caKey  crypto.Signer
	signer *podcert.Signer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key := testkeys.Generated("p256-ca")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: t0.Add(-time.Hour),
		NotAfter: t0.Add(90 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: signerName, Key: key, Chain: []*x509.Certificate{ca},
		Now: func() time.Time { return t0 }, Policy: podcert.PolicyFunc(func(*podcert.Request, podcert.Asked) error { return nil })})
	require.NoError(t, err)
	return &fixture{caCert: ca, caKey: key, signer: s}
}

func newPCR(t *testing.T, key crypto.Signer, maxSeconds int32) *certificatesv1.PodCertificateRequest {
	t.Helper()
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	require.NoError(t, err)
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1", ResourceVersion: "1", Generation: 1},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: signerName, PodName: "cart-0", PodUID: "pod-uid-1", ServiceAccountName: "cart", ServiceAccountUID: "sa-uid-1",
			NodeName: "node-1", NodeUID: "node-uid-1", MaxExpirationSeconds: &maxSeconds, StubPKCS10Request: csr,
		},
	}
}

// leafPEM signs a leaf for pub with the given times and names.
func (f *fixture) leafPEM(t *testing.T, pub crypto.PublicKey, nb, na time.Time, mod func(*x509.Certificate)) string {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "system:serviceaccount:shop:cart"},
		NotBefore: nb, NotAfter: na, KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true,
		URIs: []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/shop/sa/cart"}}}
	if mod != nil {
		mod(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.caCert, pub, f.caKey)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func cond(typ, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: "m", LastTransitionTime: metav1.NewTime(t0)}
}

func mt(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// kubernetesAccepts runs kube-apiserver's status validation on the update.
func kubernetesAccepts(t *testing.T, updated, old *certificatesv1.PodCertificateRequest, now time.Time) (bool, string) {
	t.Helper()
	var newInt, oldInt certificates.PodCertificateRequest
	require.NoError(t, legacyscheme.Scheme.Convert(updated, &newInt, nil))
	require.NoError(t, legacyscheme.Scheme.Convert(old, &oldInt, nil))
	errs := validation.ValidatePodCertificateRequestStatusUpdate(&newInt, &oldInt, testclock.NewFakePassiveClock(now))
	if len(errs) == 0 {
		return true, ""
	}
	return false, errs.ToAggregate().Error()
}

// checkStatusV1 runs podcert.CheckStatus on a v1 status update, old to
// updated, read as kubeapi reads the objects.
func checkStatusV1(updated, old *certificatesv1.PodCertificateRequest, now time.Time) error {
	req, oldStatus := kubeapi.PodCertRequest(old)
	_, newStatus := kubeapi.PodCertRequest(updated)
	return podcert.CheckStatus(&req, oldStatus, newStatus, now)
}

// checkStatusV1beta1 is checkStatusV1 for v1beta1 objects.
func checkStatusV1beta1(updated, old *certificatesv1beta1.PodCertificateRequest, now time.Time) error {
	req, oldStatus := kubeapi.PodCertRequestV1beta1(old)
	_, newStatus := kubeapi.PodCertRequestV1beta1(updated)
	return podcert.CheckStatus(&req, oldStatus, newStatus, now)
}

// toV1beta1 converts through the internal type, as the API server does.
func toV1beta1(t *testing.T, p *certificatesv1.PodCertificateRequest) *certificatesv1beta1.PodCertificateRequest {
	t.Helper()
	var internal certificates.PodCertificateRequest
	require.NoError(t, legacyscheme.Scheme.Convert(p, &internal, nil))
	var out certificatesv1beta1.PodCertificateRequest
	require.NoError(t, legacyscheme.Scheme.Convert(&internal, &out, nil))
	return &out
}

// TestStatusCheckerAgreesWithKubernetes: for a table of requests and
// status updates, podcert.CheckStatus (on the objects as kubeapi reads
// them) accepts exactly what kube-apiserver's
// ValidatePodCertificateRequestStatusUpdate accepts, for v1 and v1beta1.
func TestStatusCheckerAgreesWithKubernetes(t *testing.T) {
	f := newFixture(t)
	type update struct {
		name    string
		key     string
		max     int32
		old     func(*certificatesv1.PodCertificateRequest)
		updated func(*testing.T, *certificatesv1.PodCertificateRequest)
		now     time.Time
		accept  bool
	}
	decide := func(annotations map[string]string) func(*testing.T, *certificatesv1.PodCertificateRequest) {
		return func(t *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Spec.UnverifiedUserAnnotations = annotations
			req, _ := kubeapi.PodCertRequest(p)
			d, err := f.signer.Decide(&req)
			require.NoError(t, err)
			p.Status = kubeapi.PodCertStatus(d.Status())
		}
	}
	issued := func(nb, na, bra time.Time, mod func(*x509.Certificate)) func(*testing.T, *certificatesv1.PodCertificateRequest) {
		return func(t *testing.T, p *certificatesv1.PodCertificateRequest) {
			req, _ := kubeapi.PodCertRequest(p)
			pub, err := req.PublicKey()
			require.NoError(t, err)
			p.Status = certificatesv1.PodCertificateRequestStatus{
				Conditions:       []metav1.Condition{cond("Issued", "Issued")},
				CertificateChain: f.leafPEM(t, pub, nb, na, mod),
				NotBefore:        mt(nb), NotAfter: mt(na), BeginRefreshAt: mt(bra),
			}
		}
	}
	nb := t0.Add(-2 * time.Minute)
	good := issued(nb, nb.Add(time.Hour), nb.Add(30*time.Minute), nil)
	setStatus := func(st certificatesv1.PodCertificateRequestStatus) func(*testing.T, *certificatesv1.PodCertificateRequest) {
		return func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status = st }
	}
	then := func(first, second func(*testing.T, *certificatesv1.PodCertificateRequest)) func(*testing.T, *certificatesv1.PodCertificateRequest) {
		return func(t *testing.T, p *certificatesv1.PodCertificateRequest) { first(t, p); second(t, p) }
	}
	cases := []update{
		{name: "no change", updated: func(*testing.T, *certificatesv1.PodCertificateRequest) {}, accept: true},
		{name: "signer issues P-256", updated: decide(nil), accept: true},
		{name: "signer issues P-384", key: "p384", updated: decide(nil), accept: true},
		{name: "signer issues P-521", key: "p521", updated: decide(nil), accept: true},
		{name: "signer issues Ed25519", key: "ed25519", updated: decide(nil), accept: true},
		{name: "signer issues RSA 3072", key: "rsa3072", updated: decide(nil), accept: true},
		{name: "signer issues one hour", max: 3600, updated: decide(nil), accept: true},
		{name: "signer issues a week", max: 7 * 86400, updated: decide(nil), accept: true},
		{name: "signer issues serving hosts", updated: decide(map[string]string{podcert.DefaultServeHostsKey: "cart.shop.svc,10.0.0.1"}), accept: true},
		{name: "signer denies RSA 2048", key: "rsa2048", updated: decide(nil), accept: true},
		{name: "signer denies an unknown annotation", updated: decide(map[string]string{"example.com/x": "y"}), accept: true},
		{name: "signer fails a lifetime bound under an hour", max: 3599, updated: decide(nil), accept: true},
		{name: "issued by hand", updated: good, accept: true},
		{name: "notBefore 4m59s away", updated: good, now: nb.Add(5*time.Minute - time.Second), accept: true},
		{name: "notBefore 5m away", updated: good, now: nb.Add(5 * time.Minute)},
		{name: "notBefore 5m ahead", updated: good, now: nb.Add(-5 * time.Minute)},
		{name: "lifetime 59m", updated: issued(nb, nb.Add(59*time.Minute), nb.Add(20*time.Minute), nil)},
		{name: "lifetime over the bound", max: 3600, updated: issued(nb, nb.Add(time.Hour+time.Second), nb.Add(30*time.Minute), nil)},
		{name: "lifetime at the bound", max: 7200, updated: issued(nb, nb.Add(2*time.Hour), nb.Add(30*time.Minute), nil), accept: true},
		{name: "refresh 9m59s after notBefore", updated: issued(nb, nb.Add(time.Hour), nb.Add(10*time.Minute-time.Second), nil)},
		{name: "refresh 10m after notBefore", updated: issued(nb, nb.Add(time.Hour), nb.Add(10*time.Minute), nil), accept: true},
		{name: "refresh 10m before notAfter", updated: issued(nb, nb.Add(time.Hour), nb.Add(50*time.Minute), nil), accept: true},
		{name: "refresh 9m59s before notAfter", updated: issued(nb, nb.Add(time.Hour), nb.Add(50*time.Minute+time.Second), nil)},
		{name: "notBefore differs from the leaf", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.NotBefore = mt(nb.Add(time.Second))
		})},
		{name: "notAfter differs from the leaf", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.NotAfter = mt(nb.Add(2 * time.Hour))
		})},
		{name: "no beginRefreshAt", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status.BeginRefreshAt = nil })},
		{name: "no notBefore", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status.NotBefore = nil })},
		{name: "DNS name with an empty label", updated: issued(nb, nb.Add(time.Hour), nb.Add(30*time.Minute), func(c *x509.Certificate) { c.DNSNames = []string{"a..b"} })},
		{name: "DNS name with a trailing dot", updated: issued(nb, nb.Add(time.Hour), nb.Add(30*time.Minute), func(c *x509.Certificate) { c.DNSNames = []string{"a.b."} })},
		{name: "bad e-mail address", updated: issued(nb, nb.Add(time.Hour), nb.Add(30*time.Minute), func(c *x509.Certificate) { c.EmailAddresses = []string{"not an address"} })},
		{name: "good e-mail address", updated: issued(nb, nb.Add(time.Hour), nb.Add(30*time.Minute), func(c *x509.Certificate) { c.EmailAddresses = []string{"a@example.com"} }), accept: true},
		{name: "leaf for another key", updated: then(good, func(t *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.CertificateChain = f.leafPEM(t, testkeys.Generated("p256-other").Public(), nb, nb.Add(time.Hour), nil)
		})},
		{name: "chain not PEM", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status.CertificateChain = "junk" })},
		{name: "chain of a key block", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.CertificateChain = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}))
		})},
		{name: "intermediate not a certificate", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.CertificateChain += string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2}}))
		})},
		{name: "chain with the CA", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.CertificateChain += string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.caCert.Raw}))
		}), accept: true},
		{name: "chain over 100 KiB", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			for len(p.Status.CertificateChain) <= podcert.MaxCertificateChainSize {
				p.Status.CertificateChain += string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.caCert.Raw}))
			}
		})},
		{name: "denied", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Denied", "UnsupportedKeyType")}}), accept: true},
		{name: "failed", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Failed", "X")}}), accept: true},
		{name: "denied with a chain", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status.Conditions[0].Type = "Denied" })},
		{name: "issued and denied", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) {
			p.Status.Conditions = append(p.Status.Conditions, cond("Denied", "X"))
		})},
		{name: "denied status False", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied", Status: metav1.ConditionFalse, Reason: "X", LastTransitionTime: metav1.NewTime(t0)}}})},
		{name: "unknown condition", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Ready", "X")}})},
		{name: "no reason", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Denied", "")}})},
		{name: "reason not CamelCase", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Denied", "bad reason")}})},
		{name: "reason ending in a colon", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Denied", "A:")}})},
		{name: "reason with comma and colon", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Denied", "A,b:C_")}}), accept: true},
		{name: "no lastTransitionTime", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "X"}}})},
		{name: "negative observedGeneration", updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied", Status: metav1.ConditionTrue, Reason: "X", ObservedGeneration: -1, LastTransitionTime: metav1.NewTime(t0)}}})},
		{name: "chain without a condition", updated: then(good, func(_ *testing.T, p *certificatesv1.PodCertificateRequest) { p.Status.Conditions = nil })},
		{name: "issued, then again", old: func(p *certificatesv1.PodCertificateRequest) { good(t, p) }, updated: good},
		{name: "issued, unchanged", old: func(p *certificatesv1.PodCertificateRequest) { good(t, p) }, updated: func(*testing.T, *certificatesv1.PodCertificateRequest) {}, accept: true},
		{name: "denied, then failed", old: func(p *certificatesv1.PodCertificateRequest) {
			p.Status.Conditions = []metav1.Condition{cond("Denied", "X")}
		},
			updated: setStatus(certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Failed", "X")}})},
		{name: "failed, then issued", old: func(p *certificatesv1.PodCertificateRequest) {
			p.Status.Conditions = []metav1.Condition{cond("Failed", "X")}
		}, updated: good},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = "p256"
			}
			max := tc.max
			if max == 0 {
				max = 86400
			}
			old := newPCR(t, testkeys.Generated(key), max)
			if tc.old != nil {
				tc.old(old)
			}
			updated := old.DeepCopy()
			tc.updated(t, updated)
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			kubeOK, kubeMsg := kubernetesAccepts(t, updated, old, now)
			ours := checkStatusV1(updated, old, now)
			assert.Equal(t, tc.accept, kubeOK, "Kubernetes: %s", kubeMsg)
			assert.Equal(t, kubeOK, ours == nil, "Kubernetes: %s; podcert: %v", kubeMsg, ours)

			// The same update as v1beta1 gets the same answer.
			assert.Equal(t, kubeOK, checkStatusV1beta1(toV1beta1(t, updated), toV1beta1(t, old), now) == nil)
		})
	}
}
