package node_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/node"
)

// TestClusterTrustBundleProjection: a pod with a clusterTrustBundle
// projection gets the bundle's certificates, as the kubelet reads them
// from the API server (with the node's rights).
func TestClusterTrustBundleProjection(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)
	caPEM := newCAPEM(t, "ksa node test bundle")
	ctb, err := n.ControlPlane().Clientset().CertificatesV1().ClusterTrustBundles().Create(t.Context(), &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ksa-node-test-"},
		Spec:       certificatesv1.ClusterTrustBundleSpec{TrustBundle: string(caPEM)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	pod := node.ProbePod("bundle", "/var/run/ksa/bundle.pem")
	pod.Spec.Volumes = []corev1.Volume{{
		Name: "bundle",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{
				Name: &ctb.Name, Path: "bundle.pem",
			}}},
		}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "bundle", MountPath: "/var/run/ksa", ReadOnly: true}}
	running, err := n.RunPod(t.Context(), ns, pod)
	require.NoError(t, err)
	files, err := n.ProbeFiles(t.Context(), running)
	require.NoError(t, err)
	got := files["/var/run/ksa/bundle.pem"]
	require.Empty(t, got.Error)
	assert.Equal(t, certDERs(t, caPEM), certDERs(t, []byte(got.Data)), "the pod holds the bundle's certificates")
}

// newCAPEM returns a new self-signed CA certificate, PEM-encoded.
func newCAPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// certDERs returns the certificates of a PEM bundle, and fails on any
// other block.
func certDERs(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var ders [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return ders
		}
		require.Equal(t, "CERTIFICATE", b.Type)
		ders = append(ders, b.Bytes)
	}
}
