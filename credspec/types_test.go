package credspec_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

// TestCredentialSpecJSON holds the JSON names to Microsoft's format.
func TestCredentialSpecJSON(t *testing.T) {
	b, err := json.Marshal(fullSpec())
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"CmsPlugins": ["ActiveDirectory"],
		"DomainJoinConfig": {"DnsName": "contoso.com", "DnsTreeName": "contoso.com", "Guid": "244818ae-87ca-4fcd-92ec-e79e5252348a",
			"MachineAccountName": "WebApp01", "NetBiosName": "CONTOSO", "Sid": "S-1-5-21-1"},
		"ActiveDirectoryConfig": {
			"GroupManagedServiceAccounts": [{"Name": "WebApp01", "Scope": "contoso.com"}, {"Name": "WebApp01", "Scope": "CONTOSO"}],
			"HostAccountConfig": {"PluginGUID": "{CCC2A336-D7F3-4818-A213-272B7924213E}", "PluginInput": "ObjectId=x;SecretUri=y", "PortableCcgVersion": "1"}
		}}`, string(b))
	b, err = json.Marshal(&credspec.CredentialSpec{})
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b))
}
