package credspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/ksa-go/ksa"
)

// AddToScheme registers GMSACredentialSpec and GMSACredentialSpecList under
// windows.k8s.io/v1 and windows.k8s.io/v1alpha1 (one Go type for both, as
// the CRD has one schema and no conversion).
func AddToScheme(s *runtime.Scheme) error {
	for _, v := range []string{Version, VersionV1Alpha1} {
		gv := schema.GroupVersion{Group: Group, Version: v}
		s.AddKnownTypeWithName(gv.WithKind(Kind), &GMSACredentialSpec{})
		s.AddKnownTypeWithName(gv.WithKind(ListKind), &GMSACredentialSpecList{})
		metav1.AddToGroupVersion(s, gv)
	}
	return nil
}

// NewScheme returns a new scheme with [AddToScheme] applied.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// maxManifestBytes bounds a manifest [Decode] and [DecodeAll] read: the API
// server's request-body limit.
const maxManifestBytes = 3 << 20

// Decode reads one GMSACredentialSpec manifest, YAML or JSON, of
// windows.k8s.io/v1 or v1alpha1 (the result keeps the version it was
// written in). Its name must be a DNS-1123 subdomain and its credspec must
// fit the CRD schema, field names matched case-sensitively: unknown fields
// are a *[SchemaError], as kubectl's strict field validation makes them,
// where the API server would otherwise prune them silently. Failures match
// [ErrInvalidSpec], or [ErrTooLarge] over 3 MiB.
func Decode(data []byte) (*GMSACredentialSpec, error) {
	if len(data) > maxManifestBytes {
		return nil, tooLarge("manifest", int64(len(data)), maxManifestBytes)
	}
	j, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, invalid("manifest is not YAML or JSON", err)
	}
	return decodeJSON(j)
}

// DecodeAll reads a stream of YAML documents (or JSON values): each a
// GMSACredentialSpec, or a list of them (kind GMSACredentialSpecList or
// List, as kubectl get -o yaml prints). Empty documents are skipped. The
// stream is read up to 3 MiB.
func DecodeAll(r io.Reader) ([]*GMSACredentialSpec, error) {
	lr := &io.LimitedReader{R: r, N: maxManifestBytes + 1}
	dec := utilyaml.NewYAMLOrJSONDecoder(lr, 4096)
	var out []*GMSACredentialSpec
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, invalid("manifest stream is not YAML or JSON", err)
		}
		if lr.N <= 0 {
			return nil, tooLarge("manifest stream", -1, maxManifestBytes)
		}
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "null" {
			continue
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(doc, &tm); err != nil {
			return nil, invalid("manifest is not an object", err)
		}
		if tm.Kind == "List" || tm.Kind == ListKind {
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(doc, &list); err != nil {
				return nil, invalid("the items of a list are not a list", err)
			}
			for _, item := range list.Items {
				o, err := decodeJSON(item)
				if err != nil {
					return nil, err
				}
				out = append(out, o)
			}
			continue
		}
		o, err := decodeJSON(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if lr.N <= 0 {
		return nil, tooLarge("manifest stream", -1, maxManifestBytes)
	}
	return out, nil
}

func decodeJSON(j []byte) (*GMSACredentialSpec, error) {
	var raw map[string]any
	if err := json.Unmarshal(j, &raw); err != nil {
		return nil, invalid("manifest is not an object", err)
	}
	apiVersion, _ := raw["apiVersion"].(string)
	kind, _ := raw["kind"].(string)
	if kind != Kind || (apiVersion != Group+"/"+Version && apiVersion != Group+"/"+VersionV1Alpha1) {
		return nil, invalid(fmt.Sprintf("manifest is not a GMSACredentialSpec: want kind %s of %s/%s or %s/%s, got kind %q of %q",
			Kind, Group, Version, Group, VersionV1Alpha1, kind, apiVersion), nil)
	}
	for k := range raw {
		switch k {
		case "apiVersion", "kind", "metadata", ContentsField:
		default:
			return nil, &SchemaError{Path: k, Reason: "unknown field"}
		}
	}
	if err := checkSchema(raw[ContentsField], credSpecSchema(), ContentsField); err != nil {
		return nil, err
	}
	var o GMSACredentialSpec
	if err := json.Unmarshal(j, &o); err != nil {
		return nil, invalid("manifest does not decode", err)
	}
	if !ksa.IsObjectName(o.Name) {
		return nil, invalidName(o.Name)
	}
	return &o, nil
}
