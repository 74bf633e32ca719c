package kubeapi_test

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// certSA is the service account of the certificate tests.
var certSA = ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"}

// t0 is the fixed "now" of the certificate tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// podRequester is the user a pod-bound token of certSA authenticates as.
func podRequester(pod string) ksa.UserInfo {
	return ksa.Identity{
		ServiceAccount: certSA,
		Pod:            ksa.ObjectRef{Name: pod, UID: "pod-uid-1"},
		Node:           ksa.ObjectRef{Name: "node-1", UID: "node-uid-1"},
		CredentialID:   "JTI=abc",
	}.UserInfo()
}

func mustCSR(t testing.TB, key crypto.Signer, opts x509sa.CSROptions) []byte {
	t.Helper()
	der, err := x509sa.CreateCSR(rand.Reader, key, opts)
	require.NoError(t, err)
	return der
}

// rawCSR signs an arbitrary request template, for requests CreateCSR would
// refuse to build.
func rawCSR(t testing.TB, key crypto.Signer, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return der
}

// mustTemplate is a request template with the subject and nothing else (no
// usages requested), as other tools make them.
func mustTemplate(t testing.TB, s x509sa.Subject) *x509.CertificateRequest {
	t.Helper()
	name, err := s.Name()
	require.NoError(t, err)
	return &x509.CertificateRequest{Subject: name}
}

const testSigner = "example.com/workload"

// newPodCertSigner is a pod-certificate signer at t0 with a self-signed
// P-256 CA valid a year around it.
func newPodCertSigner(t testing.TB) *podcert.Signer {
	t.Helper()
	key := testkeys.Generated("p256-root")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubeapi test root"},
		NotBefore: t0.Add(-24 * time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: testSigner, Key: key, Chain: []*x509.Certificate{ca}, Now: func() time.Time { return t0 }})
	require.NoError(t, err)
	return s
}

// newPCR is a v1 request as the kubelet makes it.
func newPCR(t testing.TB, key crypto.Signer) *certificatesv1.PodCertificateRequest {
	t.Helper()
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	require.NoError(t, err)
	max := int32(86400)
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-abcde", Generation: 1},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: testSigner,
			PodName:    "cart-7d9f", PodUID: types.UID("0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60"),
			ServiceAccountName: "cart", ServiceAccountUID: types.UID("8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"),
			NodeName: "node-1", NodeUID: types.UID("5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60"),
			MaxExpirationSeconds: &max,
			StubPKCS10Request:    stub,
		},
	}
}

// proof signs the pod UID the older way (ECDSA keys).
func proof(t testing.TB, key crypto.Signer, podUID string) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(podUID))
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	require.NoError(t, err)
	return sig
}
