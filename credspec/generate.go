package credspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
)

// ParseCredentialSpec reads a credential-spec JSON file as New-CredentialSpec
// writes it. A UTF-8 byte-order mark is skipped; the rest must be a JSON
// object of at most [MaxSize] bytes ([ErrTooLarge], [ErrInvalidSpec])
// whose fields the CRD schema defines, names matched case-sensitively
// (*[SchemaError]): a field the API server would prune is an error here.
func ParseCredentialSpec(data []byte) (*CredentialSpec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(data) > MaxSize {
		return nil, tooLarge("credential spec", int64(len(data)), MaxSize)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, notJSONObject(string(data), false, err)
	}
	if raw == nil {
		return nil, notJSONObject(string(data), false, errors.New("credential spec is null"))
	}
	if err := checkSchema(raw, credSpecSchema(), ContentsField); err != nil {
		return nil, err
	}
	var spec CredentialSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, notJSONObject(string(data), false, err)
	}
	return &spec, nil
}

// DefaultName returns the object name windows-gmsa's Helm chart gives a
// credential spec: DomainJoinConfig.MachineAccountName in lower case with
// underscores turned into hyphens ("" without a domain join config).
func (in *CredentialSpec) DefaultName() string {
	if in == nil || in.DomainJoinConfig == nil {
		return ""
	}
	return strings.ReplaceAll(strings.ToLower(in.DomainJoinConfig.MachineAccountName), "_", "-")
}

// ResourceYAML turns a credential-spec JSON file into a windows.k8s.io/v1
// GMSACredentialSpec manifest named name, what windows-gmsa's
// GenerateCredentialSpecResource.ps1 does after New-CredentialSpec. An
// empty name means [CredentialSpec.DefaultName]. The file is read with
// [ParseCredentialSpec]; the name must be a DNS-1123 subdomain
// ([ErrInvalidSpec]).
func ResourceYAML(name string, credSpecJSON []byte) ([]byte, error) {
	spec, err := ParseCredentialSpec(credSpecJSON)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = spec.DefaultName()
	}
	return NewGMSACredentialSpec(name, spec).Manifest()
}

// Manifest renders the object as a YAML manifest: apiVersion, kind,
// metadata.name, then credspec (keys sorted within). Only the name is kept
// from metadata. The name must be a DNS-1123 subdomain ([ErrInvalidSpec]).
func (in *GMSACredentialSpec) Manifest() ([]byte, error) {
	if !ksa.IsObjectName(in.Name) {
		return nil, invalidName(in.Name)
	}
	apiVersion := in.APIVersion
	if apiVersion == "" {
		apiVersion = GroupVersion().String()
	}
	head, err := yaml.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}{APIVersion: apiVersion, Kind: Kind, Metadata: struct {
		Name string `json:"name"`
	}{Name: in.Name}})
	if err != nil {
		return nil, err
	}
	if in.CredSpec == nil {
		return head, nil
	}
	body, err := yaml.Marshal(map[string]*CredentialSpec{ContentsField: in.CredSpec})
	if err != nil {
		return nil, err
	}
	return append(head, body...), nil
}
