package clusterapi_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/interop/controlplane"
)

var plane controlplane.Shared

func TestMain(m *testing.M) { os.Exit(plane.Run(m, controlplane.Config{})) }

// TestOnAPIServer: on a real kube-apiserver, the Secret ksa renders is
// stored as it is (the server accepts Cluster API's type and the label)
// and Cluster API's look-ups, through a controller-runtime client, find it
// with the same keys; a Secret Cluster API generates and saves there is
// read by ksa into the key pair Cluster API holds.
func TestOnAPIServer(t *testing.T) {
	plane.Each(t, func(t *testing.T, cp *controlplane.ControlPlane) {
		ctx := t.Context()
		ns := cp.Namespace(t)
		ctrl, err := client.New(cp.RESTConfig(), client.Options{})
		require.NoError(t, err)

		t.Run("ksa renders, Cluster API reads", func(t *testing.T) {
			ours, err := clusterapi.NewSecret("cluster-1", testkeys.K8sRSA(), clusterapi.SecretOptions{Namespace: ns})
			require.NoError(t, err)
			created, err := cp.Clientset().CoreV1().Secrets(ns).Create(ctx, ours, metav1.CreateOptions{})
			require.NoError(t, err)
			assert.Equal(t, ours.Data, created.Data)
			assert.Equal(t, ours.Type, created.Type)
			assert.Equal(t, ours.Labels, created.Labels)

			key := client.ObjectKey{Namespace: ns, Name: "cluster-1"}
			got, err := secret.Get(ctx, ctrl, key, secret.ServiceAccount)
			require.NoError(t, err)
			assert.Equal(t, ours.Data, got.Data)

			all := secret.NewCertificatesForInitialControlPlane(nil)
			require.NoError(t, all.Lookup(ctx, ctrl, key))
			sa := all.GetByPurpose(secret.ServiceAccount)
			require.NotNil(t, sa.Secret)
			assert.Equal(t, ours.Data["tls.key"], sa.KeyPair.Key)
			assert.Equal(t, ours.Data["tls.crt"], sa.KeyPair.Cert)
			require.NoError(t, secret.Certificates{sa}.EnsureAllExist())

			pair, err := clusterapi.ReadSecret(got)
			require.NoError(t, err)
			assert.Equal(t, testkeys.K8sRSAKeyID, pair.KeyID)
			assert.Equal(t, ns, pair.Namespace)
		})

		t.Run("Cluster API generates, ksa reads", func(t *testing.T) {
			key := client.ObjectKey{Namespace: ns, Name: "cluster-2"}
			all := secret.NewCertificatesForInitialControlPlane(&bootstrapv1.ClusterConfiguration{EncryptionAlgorithm: bootstrapv1.EncryptionAlgorithmECDSAP256})
			sa := all.GetByPurpose(secret.ServiceAccount)
			require.NoError(t, sa.Generate())
			// Saved as Cluster API saves what it generated, owned by a
			// KubeadmControlPlane (no garbage collector runs here).
			require.NoError(t, secret.Certificates{sa}.SaveGenerated(ctx, ctrl, key, owner))

			stored, err := cp.Clientset().CoreV1().Secrets(ns).Get(ctx, clusterapi.SecretName("cluster-2"), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, corev1.SecretType("cluster.x-k8s.io/secret"), stored.Type)
			pair, err := clusterapi.ReadSecret(stored)
			require.NoError(t, err)
			assert.Equal(t, "cluster-2", pair.Cluster)

			again, err := clusterapi.NewSecret("cluster-2", pair.Signer, clusterapi.SecretOptions{Namespace: ns})
			require.NoError(t, err)
			assert.Equal(t, stored.Data, again.Data)
			assert.Equal(t, stored.Labels, again.Labels)
		})
	})
}
