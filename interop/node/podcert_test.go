package node_test

import (
	"context"
	"crypto"
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
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/interop/node"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
	"github.com/ksa-go/ksa/x509sa"
)

// podSigner is the signer name of the pod-certificate test.
const podSigner = "ksa.test/node-pods"

// TestPodCertificateProjection: a pod with a podCertificate projection
// starts with a credential bundle issued by ksa's controller
// (podcertctl, running in the test): the kubelet made the key and the
// PodCertificateRequest, the controller decided it, the kubelet wrote the
// key and the chain. The certificate chains to the controller's CA, holds
// the pod's key, and names the pod's service account.
func TestPodCertificateProjection(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa node test pods CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	signer, err := podcert.NewSigner(podcert.SignerConfig{SignerName: podSigner, Key: caKey, Chain: []*x509.Certificate{ca}})
	require.NoError(t, err)
	client, err := clientgo.New(n.ControlPlane().Clientset())
	require.NoError(t, err)
	ctl, err := podcertctl.New(podcertctl.Config{Client: client, Signer: signer, CAKey: caKey, NoTrustBundle: true})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-done)
	})

	pod := node.ProbePod("podcert", "/var/run/ksa/credentialbundle.pem")
	pod.Spec.Volumes = []corev1.Volume{{
		Name: "credential",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
				SignerName: podSigner, KeyType: "ECDSAP256", CredentialBundlePath: "credentialbundle.pem",
			}}},
		}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "credential", MountPath: "/var/run/ksa", ReadOnly: true}}
	running, err := n.RunPod(t.Context(), ns, pod)
	require.NoError(t, err)
	files, err := n.ProbeFiles(t.Context(), running)
	require.NoError(t, err)
	bundle := files["/var/run/ksa/credentialbundle.pem"]
	require.Empty(t, bundle.Error)

	key, chain := parseCredentialBundle(t, []byte(bundle.Data))
	require.NotEmpty(t, chain)
	leaf := chain[0]
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	require.NoError(t, err, "the certificate chains to the controller's CA")
	assert.True(t, leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(key.Public()), "the certificate holds the pod's key")
	id, err := x509sa.DecodeCertificate(leaf)
	require.NoError(t, err)
	assert.Equal(t, "system:serviceaccount:"+ns+":default", id.UserInfo().Username)
}

// parseCredentialBundle splits a pod-certificate credential bundle: the
// private key, then the certificate chain, leaf first.
func parseCredentialBundle(t *testing.T, data []byte) (crypto.Signer, []*x509.Certificate) {
	t.Helper()
	var key crypto.Signer
	var chain []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch b.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			require.NoError(t, err)
			key = k.(crypto.Signer)
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			require.NoError(t, err)
			chain = append(chain, c)
		default:
			t.Fatalf("unexpected PEM block %q in the credential bundle", b.Type)
		}
	}
	require.NotNil(t, key, "the credential bundle holds a private key")
	return key, chain
}
