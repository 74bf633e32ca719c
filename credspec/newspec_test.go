package credspec_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

// webApp01 are the facts of testdata/webapp01.json, which
// New-CredentialSpec wrote.
var webApp01 = credspec.CredentialSpecConfig{Account: "WebApp01$", DNSName: "contoso.com", NetBIOSName: "CONTOSO",
	GUID: "244818AE-87CA-4FCD-92EC-E79E5252348A", SID: "S-1-5-21-2126729477-2524075714-3094792973"}

// TestNewCredentialSpecIsNewCredentialSpecs: the spec of the facts is the
// one New-CredentialSpec wrote for them.
func TestNewCredentialSpecIsNewCredentialSpecs(t *testing.T) {
	data, err := os.ReadFile("testdata/webapp01.json")
	require.NoError(t, err)
	want, err := credspec.ParseCredentialSpec(data)
	require.NoError(t, err)
	got, err := credspec.NewCredentialSpec(webApp01)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestNewCredentialSpecOptions(t *testing.T) {
	cfg := webApp01
	cfg.Forest = "corp.contoso.com"
	cfg.AdditionalAccounts = []credspec.GroupManagedServiceAccount{{Name: "LogAgent$", Scope: "fabrikam.com"}}
	cfg.KeyVaultObjectID, cfg.KeyVaultSecretURI = "00000000-0000-0000-0000-000000000001", "https://vault.example.net/secrets/gmsa"
	spec, err := credspec.NewCredentialSpec(cfg)
	require.NoError(t, err)
	assert.Equal(t, "corp.contoso.com", spec.DomainJoinConfig.DNSTreeName)
	assert.Equal(t, credspec.GroupManagedServiceAccount{Name: "LogAgent", Scope: "fabrikam.com"}, spec.ActiveDirectoryConfig.GroupManagedServiceAccounts[2])
	assert.Equal(t, &credspec.HostAccountConfig{PortableCCGVersion: "1", PluginGUID: credspec.KeyVaultPluginGUID,
		PluginInput: "ObjectId=00000000-0000-0000-0000-000000000001;SecretUri=https://vault.example.net/secrets/gmsa"}, spec.ActiveDirectoryConfig.HostAccountConfig)
}

// TestNewCredentialSpecRefuses: facts Active Directory would not hold are
// a *ksa.ConfigError naming the field.
func TestNewCredentialSpecRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(*credspec.CredentialSpecConfig)
	}{
		{name: "an account over 15 characters", field: "Account", edit: func(c *credspec.CredentialSpecConfig) { c.Account = "WebApplication0001" }},
		{name: "no DNS name", field: "DNSName", edit: func(c *credspec.CredentialSpecConfig) { c.DNSName = "" }},
		{name: "a NetBIOS name over 15 characters", field: "NetBIOSName", edit: func(c *credspec.CredentialSpecConfig) { c.NetBIOSName = "CONTOSOCORPORATION" }},
		{name: "not a GUID", field: "GUID", edit: func(c *credspec.CredentialSpecConfig) { c.GUID = "not-a-guid" }},
		{name: "a built-in SID", field: "SID", edit: func(c *credspec.CredentialSpecConfig) { c.SID = "S-1-5-32-544" }},
		{name: "a forest with a space", field: "Forest", edit: func(c *credspec.CredentialSpecConfig) { c.Forest = "contoso com" }},
		{name: "a key vault object without its secret", field: "KeyVaultObjectID", edit: func(c *credspec.CredentialSpecConfig) { c.KeyVaultObjectID = "x" }},
		{name: "an additional account without its domain", field: "AdditionalAccounts[0]", edit: func(c *credspec.CredentialSpecConfig) {
			c.AdditionalAccounts = []credspec.GroupManagedServiceAccount{{Name: "LogAgent"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := webApp01
			tc.edit(&cfg)
			spec, err := credspec.NewCredentialSpec(cfg)
			assert.Nil(t, spec)
			var ce *ksa.ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, "credspec.CredentialSpecConfig."+tc.field, ce.Field)
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
}
