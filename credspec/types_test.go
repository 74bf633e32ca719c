package credspec_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/ksa-go/ksa/credspec"
)

func fullSpec() *credspec.CredentialSpec {
	return &credspec.CredentialSpec{
		CMSPlugins: []string{"ActiveDirectory"},
		DomainJoinConfig: &credspec.DomainJoinConfig{
			DNSName: "contoso.com", DNSTreeName: "contoso.com", GUID: "244818ae-87ca-4fcd-92ec-e79e5252348a",
			MachineAccountName: "WebApp01", NetBIOSName: "CONTOSO", SID: "S-1-5-21-1",
		},
		ActiveDirectoryConfig: &credspec.ActiveDirectoryConfig{
			GroupManagedServiceAccounts: []credspec.GroupManagedServiceAccount{{Name: "WebApp01", Scope: "contoso.com"}, {Name: "WebApp01", Scope: "CONTOSO"}},
			HostAccountConfig:           &credspec.HostAccountConfig{PluginGUID: "{CCC2A336-D7F3-4818-A213-272B7924213E}", PluginInput: "ObjectId=x;SecretUri=y", PortableCCGVersion: "1"},
		},
	}
}

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

// TestCRD holds the embedded manifest to windows-gmsa's CRD (group
// windows.k8s.io, cluster-scoped, v1 served and stored, v1alpha1 served and
// deprecated) and its schema to the Go types and to the strict decoder.
func TestCRD(t *testing.T) {
	j, err := credspec.CRDJSON()
	require.NoError(t, err)
	var crd struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Group      string            `json:"group"`
			Scope      string            `json:"scope"`
			Names      map[string]string `json:"names"`
			Conversion struct {
				Strategy string `json:"strategy"`
			} `json:"conversion"`
			Versions []struct {
				Name       string `json:"name"`
				Served     bool   `json:"served"`
				Storage    bool   `json:"storage"`
				Deprecated bool   `json:"deprecated"`
				Schema     struct {
					OpenAPIV3Schema schemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(j, &crd))
	assert.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion)
	assert.Equal(t, "CustomResourceDefinition", crd.Kind)
	assert.Equal(t, credspec.CRDName, crd.Metadata.Name)
	assert.Equal(t, "https://github.com/kubernetes/enhancements/tree/master/keps/sig-windows/689-windows-gmsa", crd.Metadata.Annotations["api-approved.kubernetes.io"])
	assert.Equal(t, "windows.k8s.io", crd.Spec.Group)
	assert.Equal(t, "Cluster", crd.Spec.Scope)
	assert.Equal(t, map[string]string{"kind": "GMSACredentialSpec", "plural": "gmsacredentialspecs"}, crd.Spec.Names)
	assert.Equal(t, "None", crd.Spec.Conversion.Strategy)
	require.Len(t, crd.Spec.Versions, 2)
	alpha, v1 := crd.Spec.Versions[0], crd.Spec.Versions[1]
	assert.Equal(t, "v1alpha1", alpha.Name)
	assert.True(t, alpha.Served)
	assert.False(t, alpha.Storage)
	assert.True(t, alpha.Deprecated)
	assert.Equal(t, "v1", v1.Name)
	assert.True(t, v1.Served && v1.Storage && !v1.Deprecated)
	assert.Equal(t, alpha.Schema, v1.Schema)

	root := v1.Schema.OpenAPIV3Schema
	assert.Equal(t, "object", root.Type)
	cs := root.Properties["credspec"]
	assert.Equal(t, "GMSA Credential Spec", cs.Description)
	assert.Equal(t, jsonShape(reflect.TypeFor[credspec.CredentialSpec]()), cs.shape(), "schema and Go types agree")

	assert.Equal(t, string(credspec.CRD()), string(mustRead(t, "crd.yaml")))
}

type schemaProps struct {
	Type        string                 `json:"type"`
	Description string                 `json:"description"`
	Properties  map[string]schemaProps `json:"properties"`
	Items       *schemaProps           `json:"items"`
}

// shape renders a schema as "type{prop:shape,...}" / "array[shape]".
func (s schemaProps) shape() string {
	switch s.Type {
	case "array":
		return "array[" + s.Items.shape() + "]"
	case "object":
		var keys []string
		for k := range s.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+s.Properties[k].shape())
		}
		return "object{" + strings.Join(parts, ",") + "}"
	}
	return s.Type
}

// jsonShape renders a Go type the same way from its JSON tags.
func jsonShape(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonShape(t.Elem())
	case reflect.Slice:
		return "array[" + jsonShape(t.Elem()) + "]"
	case reflect.String:
		return "string"
	case reflect.Struct:
		var parts []string
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			parts = append(parts, name+":"+jsonShape(t.Field(i).Type))
		}
		slices.Sort(parts)
		return "object{" + strings.Join(parts, ",") + "}"
	}
	return t.Kind().String()
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}

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
		{name: "bom", file: "\xef\xbb\xbf{\"CmsPlugins\":[\"ActiveDirectory\"],\"DomainJoinConfig\":{\"MachineAccountName\":\"A_B\"}}"},
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

func TestStaticSource(t *testing.T) {
	src, err := credspec.NewStaticSource(credspec.NewGMSACredentialSpec("b", fullSpec()), credspec.NewGMSACredentialSpec("a", &credspec.CredentialSpec{}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, src.Names())
	got, err := src.Contents(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, "{}", got)
	_, err = src.Contents(t.Context(), "missing")
	assert.Contains(t, err.Error(), `"missing"`, "the error names the object")
	assert.ErrorIs(t, err, credspec.ErrNotFound)

	for name, objs := range map[string][]*credspec.GMSACredentialSpec{
		"nil":         {nil},
		"no_credspec": {credspec.NewGMSACredentialSpec("a", nil)},
		"duplicate":   {credspec.NewGMSACredentialSpec("a", fullSpec()), credspec.NewGMSACredentialSpec("a", fullSpec())},
		"bad_name":    {credspec.NewGMSACredentialSpec("A", fullSpec())},
	} {
		_, err := credspec.NewStaticSource(objs...)
		assert.ErrorIs(t, err, credspec.ErrInvalidSpec, name)
	}
	for name, m := range map[string]map[string]string{
		"not_json": {"a": "x"},
		"null":     {"a": "null"},
		"too_big":  {"a": `{"a":"` + strings.Repeat("x", credspec.MaxSize) + `"}`},
	} {
		_, err := credspec.NewStaticSourceJSON(m)
		assert.ErrorIs(t, err, credspec.ErrInvalidSpec, name)
	}
	src, err = credspec.NewStaticSourceJSON(map[string]string{"a": `{ "b": 1, "a": 2 }`})
	require.NoError(t, err)
	got, err = src.Contents(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, `{"a":2,"b":1}`, got)
}
