package kubeapi_test

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
)

// TestApplyPodCertDecision: a decision's status goes onto a v1 object and
// passes the rules; applying it again changes nothing, and another
// decision cannot overwrite it.
func TestApplyPodCertDecision(t *testing.T) {
	s := newPodCertSigner(t)
	pcr := newPCR(t, testkeys.Generated("p256"))
	req, st := kubeapi.PodCertRequest(pcr)
	assert.Equal(t, podcert.Status{}, st)
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome, d.Message)

	obj := pcr.DeepCopy()
	require.NoError(t, kubeapi.ApplyPodCertDecision(&d, obj))
	require.Len(t, obj.Status.Conditions, 1)
	c := obj.Status.Conditions[0]
	assert.Equal(t, metav1.Condition{Type: "Issued", Status: metav1.ConditionTrue, ObservedGeneration: 1,
		LastTransitionTime: metav1.NewTime(t0), Reason: "Issued", Message: d.Message}, c)
	assert.Equal(t, d.CertificateChain, obj.Status.CertificateChain)
	assert.True(t, obj.Status.NotBefore.Equal(&metav1.Time{Time: d.NotBefore}))
	assert.True(t, obj.Status.BeginRefreshAt.Equal(&metav1.Time{Time: d.BeginRefreshAt}))
	assert.True(t, obj.Status.NotAfter.Equal(&metav1.Time{Time: d.NotAfter}))
	oldReq, oldStatus := kubeapi.PodCertRequest(pcr)
	_, newStatus := kubeapi.PodCertRequest(obj)
	require.NoError(t, podcert.CheckStatus(&oldReq, oldStatus, newStatus, t0))
	// The status reads back as it was set.
	assert.Equal(t, obj.Status, kubeapi.PodCertStatus(newStatus))

	require.NoError(t, kubeapi.ApplyPodCertDecision(&d, obj))
	d2, err := s.Decide(&req)
	require.NoError(t, err)
	before := obj.DeepCopy()
	assert.ErrorIs(t, kubeapi.ApplyPodCertDecision(&d2, obj), podcert.ErrInvalidStatus)
	assert.Equal(t, before, obj, "a refused update leaves the object unchanged")

	// A decision for another request's key is refused on this one.
	other := newPCR(t, testkeys.Generated("p256-leaf"))
	err = kubeapi.ApplyPodCertDecision(&d, other)
	require.ErrorIs(t, err, podcert.ErrInvalidStatus)
	assert.Empty(t, other.Status.Conditions)
}

// TestPodCertV1beta1 decides a v1beta1 request of the older form (PKIX key
// and proof of possession, Kubernetes 1.35) and applies the status.
func TestPodCertV1beta1(t *testing.T) {
	s := newPodCertSigner(t)
	key := testkeys.Generated("p384")
	v1 := newPCR(t, key)
	pkix, err := x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(t, err)
	pcr := &certificatesv1beta1.PodCertificateRequest{ObjectMeta: v1.ObjectMeta, Spec: certificatesv1beta1.PodCertificateRequestSpec{
		SignerName: v1.Spec.SignerName, PodName: v1.Spec.PodName, PodUID: v1.Spec.PodUID,
		ServiceAccountName: v1.Spec.ServiceAccountName, ServiceAccountUID: v1.Spec.ServiceAccountUID,
		NodeName: v1.Spec.NodeName, NodeUID: v1.Spec.NodeUID, MaxExpirationSeconds: v1.Spec.MaxExpirationSeconds,
	}}
	//lint:ignore SA1019 the older form is what this test covers.
	pcr.Spec.PKIXPublicKey = pkix
	//lint:ignore SA1019 as above.
	pcr.Spec.ProofOfPossession = proof(t, key, string(v1.Spec.PodUID))
	req, _ := kubeapi.PodCertRequestV1beta1(pcr)
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome, d.Message)
	old := pcr.DeepCopy()
	require.NoError(t, kubeapi.ApplyPodCertDecisionV1beta1(&d, pcr))
	oldReq, oldStatus := kubeapi.PodCertRequestV1beta1(old)
	_, newStatus := kubeapi.PodCertRequestV1beta1(pcr)
	require.NoError(t, podcert.CheckStatus(&oldReq, oldStatus, newStatus, t0))
	assert.Equal(t, d.CertificateChain, pcr.Status.CertificateChain)
	assert.Equal(t, pcr.Status, kubeapi.PodCertStatusV1beta1(newStatus))

	d2, err := s.Decide(&req)
	require.NoError(t, err)
	assert.ErrorIs(t, kubeapi.ApplyPodCertDecisionV1beta1(&d2, pcr), podcert.ErrInvalidStatus)

	r, st := kubeapi.PodCertRequestV1beta1(nil)
	assert.Equal(t, podcert.Request{}, r)
	assert.Equal(t, podcert.Status{}, st)
	r, st = kubeapi.PodCertRequest(nil)
	assert.Equal(t, podcert.Request{}, r)
	assert.Equal(t, podcert.Status{}, st)
}

// TestPodCertRequest: every field of the spec and status is read, and the
// status converts back as it was.
func TestPodCertRequest(t *testing.T) {
	pcr := newPCR(t, testkeys.Generated("p256"))
	pcr.Spec.UnverifiedUserAnnotations = map[string]string{"a.b/c": "d"}
	nb, bra, na := metav1.NewTime(t0), metav1.NewTime(t0.Add(30*60e9)), metav1.NewTime(t0.Add(60*60e9))
	pcr.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: "Failed", Status: metav1.ConditionTrue, ObservedGeneration: 3,
			LastTransitionTime: metav1.NewTime(t0), Reason: "R", Message: "m"}},
		CertificateChain: "chain", NotBefore: &nb, BeginRefreshAt: &bra, NotAfter: &na,
	}
	req, st := kubeapi.PodCertRequest(pcr)
	assert.Equal(t, podcert.Request{
		Namespace: "shop", Name: "req-abcde", Generation: 1, SignerName: testSigner,
		PodName: "cart-7d9f", PodUID: "0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60",
		ServiceAccountName: "cart", ServiceAccountUID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60",
		NodeName: "node-1", NodeUID: "5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60",
		MaxExpirationSeconds: 86400, StubPKCS10Request: pcr.Spec.StubPKCS10Request,
		UnverifiedUserAnnotations: map[string]string{"a.b/c": "d"},
	}, req)
	assert.Equal(t, []podcert.Condition{{Type: "Failed", Status: "True", ObservedGeneration: 3, LastTransitionTime: t0, Reason: "R", Message: "m"}}, st.Conditions)
	assert.Equal(t, podcert.Failed, st.Outcome())
	assert.Equal(t, "chain", st.CertificateChain)
	assert.Equal(t, t0, *st.NotBefore)
	assert.Equal(t, pcr.Status, kubeapi.PodCertStatus(st))

	pcr.Spec.MaxExpirationSeconds = nil
	req, _ = kubeapi.PodCertRequest(pcr)
	assert.Zero(t, req.MaxExpirationSeconds)
	assert.Equal(t, int32(podcert.DefaultMaxExpirationSeconds), req.MaxLifetime())
}
