package credspec_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

// completeSpec holds every member New-CredentialSpec writes.
const completeSpec = `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","DnsTreeName":"contoso.com","Guid":"244818ae-87ca-4fcd-92ec-e79e5252348a","MachineAccountName":"A_B","NetBiosName":"CONTOSO","Sid":"S-1-5-21-1"},"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":"A_B","Scope":"contoso.com"}]}}`

func TestResourceYAML(t *testing.T) {
	out, err := credspec.ResourceYAML("", mustRead(t, filepath.Join("testdata", "webapp01.json")))
	require.NoError(t, err)
	assert.Equal(t, `apiVersion: windows.k8s.io/v1
kind: GMSACredentialSpec
metadata:
  name: webapp01
credspec:
  ActiveDirectoryConfig:
    GroupManagedServiceAccounts:
    - Name: WebApp01
      Scope: contoso.com
    - Name: WebApp01
      Scope: CONTOSO
  CmsPlugins:
  - ActiveDirectory
  DomainJoinConfig:
    DnsName: contoso.com
    DnsTreeName: contoso.com
    Guid: 244818ae-87ca-4fcd-92ec-e79e5252348a
    MachineAccountName: WebApp01
    NetBiosName: CONTOSO
    Sid: S-1-5-21-2126729477-2524075714-3094792973
`, string(out))
	back, err := credspec.Decode(out)
	require.NoError(t, err)
	spec, err := credspec.ParseCredentialSpec(mustRead(t, filepath.Join("testdata", "webapp01.json")))
	require.NoError(t, err)
	assert.Equal(t, spec, back.CredSpec)

	// A name that YAML would read as a number stays a string.
	out, err = credspec.ResourceYAML("123", mustRead(t, filepath.Join("testdata", "webapp01.json")))
	require.NoError(t, err)
	assert.Contains(t, string(out), "name: \"123\"\n")

	tests := []struct {
		name    string
		objName string
		file    string
		wantErr error
	}{
		{name: "bom", file: "\xef\xbb\xbf" + completeSpec},
		{name: "empty object", file: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "no domain join config", file: `{"CmsPlugins":["ActiveDirectory"]}`, wantErr: credspec.ErrInvalidSpec},
		{name: "no gMSA", file: strings.Replace(completeSpec, `"GroupManagedServiceAccounts":[{"Name":"A_B","Scope":"contoso.com"}]`, `"GroupManagedServiceAccounts":[]`, 1), wantErr: credspec.ErrInvalidSpec},
		{name: "a member twice", file: strings.Replace(completeSpec, `"CmsPlugins"`, `"CmsPlugins":["x"],"CmsPlugins"`, 1), wantErr: credspec.ErrAmbiguousSpec},
		{name: "a member twice in another case", file: strings.Replace(completeSpec, `"CmsPlugins"`, `"cmsplugins":["x"],"CmsPlugins"`, 1), wantErr: credspec.ErrAmbiguousSpec},
		{name: "a nested member twice", file: strings.Replace(completeSpec, `"Sid"`, `"SID":"S-1-5-21-2","Sid"`, 1), wantErr: credspec.ErrAmbiguousSpec},
		{name: "invalid UTF-8", file: strings.Replace(completeSpec, `"Scope":"contoso.com"`, "\"Scope\":\"contoso\xff.com\"", 1), wantErr: credspec.ErrInvalidSpec},
		{name: "unknown_field", file: `{"CmsPlugin":["ActiveDirectory"]}`, wantErr: credspec.ErrInvalidSpec},
		{name: "not_json", file: `CmsPlugins = ActiveDirectory`, wantErr: credspec.ErrInvalidSpec},
		{name: "null", file: `null`, wantErr: credspec.ErrInvalidSpec},
		{name: "no_name", file: `{"CmsPlugins":["ActiveDirectory"]}`, wantErr: credspec.ErrInvalidSpec},
		{name: "bad_name", objName: "Bad Name", file: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "too_large", file: `{"CmsPlugins":["` + strings.Repeat("x", credspec.MaxSize) + `"]}`, wantErr: credspec.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := credspec.ResourceYAML(tt.objName, []byte(tt.file))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(out), "name: a-b\n")
		})
	}
}
