package credspec

import (
	_ "embed"
	"sync"

	"sigs.k8s.io/yaml"
)

//go:embed crd.yaml
var crdYAML string

var crdJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON([]byte(crdYAML)) })

// CRD returns the CustomResourceDefinition manifest (YAML) for
// GMSACredentialSpec, with windows-gmsa's schema: apiextensions.k8s.io/v1,
// name gmsacredentialspecs.windows.k8s.io, cluster-scoped, v1 served and
// stored, v1alpha1 served and deprecated, conversion None, and the typed
// schema of credspec (unknown fields pruned). The slice is a new copy.
func CRD() []byte { return []byte(crdYAML) }

// CRDJSON returns the same manifest as JSON, ready to decode into an
// apiextensions.k8s.io/v1 CustomResourceDefinition. The slice is a new
// copy.
func CRDJSON() ([]byte, error) {
	j, err := crdJSON()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), j...), nil
}
