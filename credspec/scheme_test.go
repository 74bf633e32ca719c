package credspec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/ksa-go/ksa/credspec"
)

func TestScheme(t *testing.T) {
	s, err := credspec.NewScheme()
	require.NoError(t, err)
	for _, v := range []string{"v1", "v1alpha1"} {
		gvk := schema.GroupVersionKind{Group: "windows.k8s.io", Version: v, Kind: "GMSACredentialSpec"}
		obj, err := s.New(gvk)
		require.NoError(t, err, v)
		assert.IsType(t, &credspec.GMSACredentialSpec{}, obj)
		list, err := s.New(gvk.GroupVersion().WithKind("GMSACredentialSpecList"))
		require.NoError(t, err, v)
		assert.IsType(t, &credspec.GMSACredentialSpecList{}, list)
	}
	codecs := serializer.NewCodecFactory(s)
	for _, f := range []string{"credspec-0.yml", "credspec-1.yml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
		require.NoError(t, err, f)
		o := obj.(*credspec.GMSACredentialSpec)
		assert.Equal(t, "windows.k8s.io", gvk.Group)
		assert.Equal(t, "CONTOSO", o.CredSpec.DomainJoinConfig.NetBIOSName)
	}
	assert.Equal(t, schema.GroupVersionResource{Group: "windows.k8s.io", Version: "v1", Resource: "gmsacredentialspecs"}, credspec.GroupVersionResource())
	assert.Equal(t, "gmsacredentialspecs.windows.k8s.io", credspec.CRDName)
}

func TestDecode(t *testing.T) {
	const head = "apiVersion: windows.k8s.io/v1\nkind: GMSACredentialSpec\nmetadata:\n  name: x\n"
	tests := []struct {
		name     string
		manifest string
		wantErr  error
		wantPath string
	}{
		{name: "json", manifest: `{"apiVersion":"windows.k8s.io/v1","kind":"GMSACredentialSpec","metadata":{"name":"x"},"credspec":{"CmsPlugins":["ActiveDirectory"]}}`},
		{name: "no_credspec", manifest: head},
		{name: "null_field", manifest: head + "credspec:\n  DomainJoinConfig: null\n"},
		{name: "wrong_kind", manifest: "apiVersion: windows.k8s.io/v1\nkind: Secret\nmetadata:\n  name: x\n", wantErr: credspec.ErrInvalidSpec},
		{name: "wrong_group", manifest: "apiVersion: example.com/v1\nkind: GMSACredentialSpec\nmetadata:\n  name: x\n", wantErr: credspec.ErrInvalidSpec},
		{name: "bad_name", manifest: "apiVersion: windows.k8s.io/v1\nkind: GMSACredentialSpec\nmetadata:\n  name: Not_Valid\n", wantErr: credspec.ErrInvalidSpec},
		{name: "spec_instead_of_credspec", manifest: head + "spec: {}\n", wantErr: credspec.ErrInvalidSpec, wantPath: "spec"},
		{name: "unknown_field", manifest: head + "credspec:\n  Extra: 1\n", wantErr: credspec.ErrInvalidSpec, wantPath: "credspec.Extra"},
		{name: "wrong_case", manifest: head + "credspec:\n  DomainJoinConfig:\n    dnsName: contoso.com\n", wantErr: credspec.ErrInvalidSpec, wantPath: "credspec.DomainJoinConfig.dnsName"},
		{name: "wrong_type", manifest: head + "credspec:\n  CmsPlugins: ActiveDirectory\n", wantErr: credspec.ErrInvalidSpec, wantPath: "credspec.CmsPlugins"},
		{name: "number_for_string", manifest: head + "credspec:\n  ActiveDirectoryConfig:\n    HostAccountConfig:\n      PortableCcgVersion: 1\n", wantErr: credspec.ErrInvalidSpec,
			wantPath: "credspec.ActiveDirectoryConfig.HostAccountConfig.PortableCcgVersion"},
		{name: "array_item", manifest: head + "credspec:\n  ActiveDirectoryConfig:\n    GroupManagedServiceAccounts:\n    - name: a\n", wantErr: credspec.ErrInvalidSpec,
			wantPath: "credspec.ActiveDirectoryConfig.GroupManagedServiceAccounts[0].name"},
		{name: "not_yaml", manifest: "a: [", wantErr: credspec.ErrInvalidSpec},
		{name: "too_large", manifest: head + "# " + strings.Repeat("x", 3<<20), wantErr: credspec.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := credspec.Decode([]byte(tt.manifest))
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, "x", o.Name)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantPath != "" {
				var se *credspec.SchemaError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tt.wantPath, se.Path)
			}
		})
	}
}

func TestDecodeAll(t *testing.T) {
	var stream strings.Builder
	for _, f := range []string{"credspec-0.yml", "credspec-1.yml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		stream.WriteString("---\n")
		stream.Write(data)
	}
	stream.WriteString("---\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: windows.k8s.io/v1\n  kind: GMSACredentialSpec\n  metadata:\n    name: from-list\n")
	objs, err := credspec.DecodeAll(strings.NewReader(stream.String()))
	require.NoError(t, err)
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	assert.Equal(t, []string{"credspec-0", "credspec-1", "from-list"}, names)

	_, err = credspec.DecodeAll(strings.NewReader("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"))
	assert.ErrorIs(t, err, credspec.ErrInvalidSpec)
	_, err = credspec.DecodeAll(strings.NewReader(strings.Repeat("# padding\n", 400_000)))
	assert.ErrorIs(t, err, credspec.ErrTooLarge)
}
