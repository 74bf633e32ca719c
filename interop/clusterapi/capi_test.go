package clusterapi_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// cluster is the Cluster the Secrets of these tests belong to.
var cluster = client.ObjectKey{Namespace: "fleet", Name: "cluster-1"}

// owner is the owner Cluster API gives a Secret it generates: its
// KubeadmControlPlane.
var owner = metav1.OwnerReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta2", Kind: "KubeadmControlPlane",
	Name: "cluster-1", UID: "6b0f5e8c-0000-4000-8000-000000000001", Controller: new(true), BlockOwnerDeletion: new(true)}

// generated is the service-account Secret Cluster API generates for a
// control plane whose ClusterConfiguration has alg, and the signer it
// holds, parsed by Cluster API's own decoder.
func generated(t *testing.T, alg bootstrapv1.EncryptionAlgorithmType) (*corev1.Secret, crypto.Signer) {
	t.Helper()
	all := secret.NewCertificatesForInitialControlPlane(&bootstrapv1.ClusterConfiguration{EncryptionAlgorithm: alg})
	sa := all.GetByPurpose(secret.ServiceAccount)
	require.NotNil(t, sa)
	require.NoError(t, sa.Generate())
	s := sa.AsSecret(cluster, owner)
	key, err := certs.DecodePrivateKeyPEM(sa.KeyPair.Key)
	require.NoError(t, err)
	return s, key
}

// TestSecretIsClusterAPIs: for every key Cluster API generates, ksa reads
// its Secret into the same key pair, and renders the same Secret again
// from that key: name, namespace, label, type and both data keys, byte for
// byte; only the owner Cluster API sets on a Secret it generated is not
// ksa's to set.
func TestSecretIsClusterAPIs(t *testing.T) {
	for _, alg := range []bootstrapv1.EncryptionAlgorithmType{"", bootstrapv1.EncryptionAlgorithmRSA2048,
		bootstrapv1.EncryptionAlgorithmRSA3072, bootstrapv1.EncryptionAlgorithmRSA4096,
		bootstrapv1.EncryptionAlgorithmECDSAP256, bootstrapv1.EncryptionAlgorithmECDSAP384} {
		name := string(alg)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			capi, key := generated(t, alg)
			switch alg {
			case bootstrapv1.EncryptionAlgorithmECDSAP256, bootstrapv1.EncryptionAlgorithmECDSAP384:
				require.IsType(t, &ecdsa.PrivateKey{}, key)
			default:
				require.IsType(t, &rsa.PrivateKey{}, key)
			}

			pair, err := clusterapi.ReadSecret(capi)
			require.NoError(t, err)
			assert.Equal(t, cluster.Name, pair.Cluster)
			assert.Equal(t, cluster.Namespace, pair.Namespace)
			assert.True(t, key.(interface{ Equal(crypto.PrivateKey) bool }).Equal(pair.Signer))
			kid, err := jwks.KeyID(key)
			require.NoError(t, err)
			assert.Equal(t, kid, pair.KeyID)
			require.Len(t, pair.Keys, 1)

			ours, err := clusterapi.NewSecret(cluster.Name, pair.Signer, clusterapi.SecretOptions{Namespace: cluster.Namespace})
			require.NoError(t, err)
			assert.Equal(t, capi.Name, ours.Name)
			assert.Equal(t, capi.Namespace, ours.Namespace)
			assert.Equal(t, capi.Labels, ours.Labels)
			assert.Equal(t, capi.Type, ours.Type)
			assert.Equal(t, clusterv1.ClusterSecretType, ours.Type)
			assert.Equal(t, secret.Name(cluster.Name, secret.ServiceAccount), clusterapi.SecretName(cluster.Name))
			require.Len(t, ours.Data, len(capi.Data))
			for k, v := range capi.Data {
				assert.Equal(t, string(v), string(ours.Data[k]), "data %s", k)
			}
			assert.Equal(t, []metav1.OwnerReference{owner}, capi.OwnerReferences)
			assert.Empty(t, ours.OwnerReferences)
		})
	}
}

// lookedUp is the service-account certificate Cluster API's look-up
// fills from the Secrets c holds.
func lookedUp(t *testing.T, c client.Client) *secret.Certificate {
	t.Helper()
	all := secret.NewControlPlaneJoinCerts(nil)
	require.NoError(t, all.Lookup(t.Context(), c, cluster))
	return all.GetByPurpose(secret.ServiceAccount)
}

// TestClusterAPIReadsKsasSecret: Cluster API's look-up finds the Secret
// ksa rendered, takes its keys as they are (it generates none in their
// place, and saves nothing), accepts it for joining control-plane
// machines, and writes tls.key and tls.crt to the files kubeadm reads.
func TestClusterAPIReadsKsasSecret(t *testing.T) {
	for _, key := range []crypto.Signer{testkeys.K8sRSA(), testkeys.K8sEC()} {
		ours, err := clusterapi.NewSecret(cluster.Name, key, clusterapi.SecretOptions{Namespace: cluster.Namespace,
			VerifyKeys: []crypto.PublicKey{testkeys.K8sOtherRSAPublic()}})
		require.NoError(t, err)
		c := fake.NewClientBuilder().WithObjects(ours.DeepCopy()).Build()

		sa := lookedUp(t, c)
		require.NotNil(t, sa.Secret)
		assert.Equal(t, ours.Data["tls.key"], sa.KeyPair.Key)
		assert.Equal(t, ours.Data["tls.crt"], sa.KeyPair.Cert)
		decoded, err := certs.DecodePrivateKeyPEM(sa.KeyPair.Key)
		require.NoError(t, err)
		assert.True(t, key.(interface{ Equal(crypto.PrivateKey) bool }).Equal(decoded))

		// A control plane's look-up or generation keeps the Secret.
		initial := secret.NewCertificatesForInitialControlPlane(nil)
		require.NoError(t, initial.LookupOrGenerate(t.Context(), c, cluster, owner))
		got := initial.GetByPurpose(secret.ServiceAccount)
		assert.False(t, got.Generated, "Cluster API generated a key in place of ksa's")
		assert.Equal(t, ours.Data["tls.key"], got.KeyPair.Key)
		var stored corev1.Secret
		require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(ours), &stored))
		assert.Equal(t, ours.Data, stored.Data)
		assert.Empty(t, stored.OwnerReferences)

		// Joining control-plane machines need the private key: present.
		require.NoError(t, secret.Certificates{sa}.EnsureAllExist())

		// The files of a control-plane machine's bootstrap data.
		files := sa.AsFiles()
		require.Len(t, files, 2)
		assert.Equal(t, bootstrapv1.File{Path: "/etc/kubernetes/pki/sa.pub", Owner: "root:root", Permissions: "0640", Content: string(ours.Data["tls.crt"])}, files[0])
		assert.Equal(t, bootstrapv1.File{Path: "/etc/kubernetes/pki/sa.key", Owner: "root:root", Permissions: "0600", Content: string(ours.Data["tls.key"])}, files[1])
	}
}

// TestClusterAPIRefusesAPublicKeyAlone: a Secret with tls.crt and no
// tls.key (all a key that cannot leave its HSM or KMS could give) passes
// Cluster API's look-up, gives the first machine sa.pub alone (kubeadm then
// makes a key of its own), and fails every joining control-plane machine:
// why ksa refuses to render it, and refuses it when read.
func TestClusterAPIRefusesAPublicKeyAlone(t *testing.T) {
	ours, err := clusterapi.NewSecret(cluster.Name, testkeys.K8sEC(), clusterapi.SecretOptions{Namespace: cluster.Namespace})
	require.NoError(t, err)
	delete(ours.Data, "tls.key")
	c := fake.NewClientBuilder().WithObjects(ours.DeepCopy()).Build()

	sa := lookedUp(t, c)
	require.NotNil(t, sa.Secret)
	files := sa.AsFiles()
	require.Len(t, files, 1)
	assert.Equal(t, "/etc/kubernetes/pki/sa.pub", files[0].Path)
	require.ErrorIs(t, secret.Certificates{sa}.EnsureAllExist(), secret.ErrMissingKey)

	_, err = clusterapi.ReadSecret(ours)
	require.ErrorIs(t, err, clusterapi.ErrInvalidKeyPair)
}

// TestPEMBlocks: the blocks Cluster API writes, which ksa writes too:
// tls.crt a PKIX public key (not a certificate), tls.key PKCS #1 or SEC 1.
func TestPEMBlocks(t *testing.T) {
	for alg, want := range map[bootstrapv1.EncryptionAlgorithmType]string{
		bootstrapv1.EncryptionAlgorithmRSA2048: "RSA PRIVATE KEY", bootstrapv1.EncryptionAlgorithmECDSAP256: "EC PRIVATE KEY"} {
		capi, key := generated(t, alg)
		ours, err := clusterapi.NewSecret(cluster.Name, key, clusterapi.SecretOptions{})
		require.NoError(t, err)
		for _, s := range []*corev1.Secret{capi, ours} {
			crt, rest := pem.Decode(s.Data["tls.crt"])
			require.NotNil(t, crt)
			assert.Equal(t, "PUBLIC KEY", crt.Type)
			assert.Empty(t, rest)
			k, rest := pem.Decode(s.Data["tls.key"])
			require.NotNil(t, k)
			assert.Equal(t, want, k.Type)
			assert.Empty(t, rest)
		}
	}
}
