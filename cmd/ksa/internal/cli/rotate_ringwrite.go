package cli

import (
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/extsigner"
)

// ringFileBytes encodes a ring file as JSON, or as YAML when like, the
// file it replaces, is not JSON.
func ringFileBytes(file *extsigner.RingFile, like []byte) ([]byte, error) {
	out := file.AppendJSON(nil)
	if isJSON(like) {
		return out, nil
	}
	y, err := yaml.JSONToYAML(out)
	if err != nil {
		return nil, fail(err, bugFix, "writing the ring file as YAML")
	}
	return y, nil
}
