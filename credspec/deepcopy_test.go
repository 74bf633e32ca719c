package credspec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

func TestDeepCopy(t *testing.T) {
	obj := credspec.NewGMSACredentialSpec("webapp01", fullSpec())
	obj.Labels = map[string]string{"a": "b"}
	cp := obj.DeepCopyObject().(*credspec.GMSACredentialSpec)
	require.Equal(t, obj, cp)
	cp.Labels["a"] = "c"
	cp.CredSpec.CMSPlugins[0] = "x"
	cp.CredSpec.DomainJoinConfig.DNSName = "x"
	cp.CredSpec.ActiveDirectoryConfig.GroupManagedServiceAccounts[0].Name = "x"
	cp.CredSpec.ActiveDirectoryConfig.HostAccountConfig.PluginInput = "x"
	assert.Equal(t, credspec.NewGMSACredentialSpec("webapp01", fullSpec()).CredSpec, obj.CredSpec)
	assert.Equal(t, "b", obj.Labels["a"])

	list := &credspec.GMSACredentialSpecList{Items: []credspec.GMSACredentialSpec{*obj}}
	lc := list.DeepCopyObject().(*credspec.GMSACredentialSpecList)
	lc.Items[0].CredSpec.CMSPlugins[0] = "y"
	assert.Equal(t, "ActiveDirectory", list.Items[0].CredSpec.CMSPlugins[0])

	var nilObj *credspec.GMSACredentialSpec
	assert.Nil(t, nilObj.DeepCopy())
	var nilSpec *credspec.CredentialSpec
	assert.Nil(t, nilSpec.DeepCopy())
}
