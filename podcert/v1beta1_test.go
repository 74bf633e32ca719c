package podcert_test

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

// TestV1beta1 decides a v1beta1 request of the older form (PKIX key and
// proof of possession, Kubernetes 1.35) and applies the status.
func TestV1beta1(t *testing.T) {
	s := newSigner(t, newCA(t, false), nil)
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
	req := podcert.FromV1beta1(pcr)
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome, d.Message)
	old := pcr.DeepCopy()
	require.NoError(t, d.ApplyV1beta1(pcr))
	require.NoError(t, podcert.CheckStatusV1beta1(pcr, old, t0))
	assert.Equal(t, d.CertificateChain, pcr.Status.CertificateChain)
	assert.Equal(t, podcert.Request{}, podcert.FromV1beta1(nil))
	assert.Equal(t, podcert.Request{}, podcert.FromV1(nil))
}
