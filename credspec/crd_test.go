package credspec_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

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
