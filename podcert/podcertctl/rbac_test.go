package podcertctl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// TestObjects: the objects Manifests renders, in the order to create
// them, the ClusterRole holding Rules; the names are checked.
func TestObjects(t *testing.T) {
	cfg := podcertctl.RBACConfig{SignerName: "example.com/pods", Namespace: "ksa-system", ServiceAccount: "signer",
		TrustBundleName: "example.com:pods:mine"}
	objs, err := podcertctl.Objects(cfg)
	require.NoError(t, err)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	assert.Equal(t, []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, kinds)
	rules, err := podcertctl.Rules(cfg)
	require.NoError(t, err)
	assert.Equal(t, rules, objs[2].(*rbacv1.ClusterRole).Rules)
	assert.Equal(t, []string{"example.com:pods:mine"}, rules[4].ResourceNames)
	role := objs[4].(*rbacv1.Role)
	assert.Equal(t, "ksa-system", role.Namespace)
	leaseRules, err := podcertctl.LeaseRules(cfg)
	require.NoError(t, err)
	assert.Equal(t, leaseRules, role.Rules)
	assert.Equal(t, []string{"ksa-podcert.example.com.pods"}, leaseRules[1].ResourceNames, "DefaultLeaseName")
	assert.Equal(t, []string{"get", "update"}, leaseRules[1].Verbs)
	assert.Equal(t, []string{"create"}, leaseRules[0].Verbs)

	cfg.OmitNamespace = true
	objs, err = podcertctl.Objects(cfg)
	require.NoError(t, err)
	assert.Len(t, objs, 5)

	for _, tc := range []struct {
		name  string
		cfg   podcertctl.RBACConfig
		field string
	}{
		{name: "no signer name", cfg: podcertctl.RBACConfig{Namespace: "ns", ServiceAccount: "sa"}, field: "SignerName"},
		{name: "a bundle of another signer", cfg: podcertctl.RBACConfig{SignerName: "example.com/pods", TrustBundleName: "example.com:other:b"}, field: "TrustBundleName"},
		{name: "a bad Lease name", cfg: podcertctl.RBACConfig{SignerName: "example.com/pods", LeaseName: "No"}, field: "LeaseName"},
		{name: "the prefix alone", cfg: podcertctl.RBACConfig{SignerName: "example.com/pods", TrustBundleName: "example.com:pods:"}, field: "TrustBundleName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcertctl.Rules(tc.cfg)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "podcertctl.RBACConfig."+tc.field, ce.Field)
		})
	}
	_, err = podcertctl.Objects(podcertctl.RBACConfig{SignerName: "example.com/pods", Namespace: "Bad", ServiceAccount: "sa"})
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "podcertctl.RBACConfig.Namespace", ce.Field)
}
