package podcertctl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// TestReservedSignerNames: names whose domain is kubernetes.io or a
// subdomain of it are the Kubernetes project's (kube-apiserver applies
// its signers' rules to them); the controller and its RBAC refuse them.
// A domain that only starts with kubernetes.io is anyone's.
func TestReservedSignerNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reserved bool
	}{
		{name: "kubernetes.io/pods", reserved: true},
		{name: "pods.kubernetes.io/mine", reserved: true},
		{name: "kubernetes.io.example.com/pods"},
		{name: "example.com/kubernetes.io"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcertctl.Manifests(podcertctl.RBACConfig{SignerName: tc.name, Namespace: "ksa-system", ServiceAccount: "signer"})
			ca := newRotationCA(t, "CA", time.Now, t0.Add(-time.Hour), func(c *podcert.SignerConfig) { c.SignerName = tc.name })
			_, newErr := podcertctl.New(podcertctl.Config{Client: fakeClient(t, fake.NewClientset()), Signer: ca.signer})
			if !tc.reserved {
				assert.NoError(t, err)
				assert.NoError(t, newErr)
				return
			}
			for _, err := range []error{err, newErr} {
				require.ErrorIs(t, err, podcertctl.ErrReservedSignerName)
				require.ErrorIs(t, err, ksa.ErrInvalidConfig)
				assert.ErrorContains(t, err, tc.name)
			}
		})
	}
}
