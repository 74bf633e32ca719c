package credspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// ParseCredentialSpec reads a credential-spec JSON file as New-CredentialSpec
// writes it, strictly, since what it accepts is what a node's container
// runtime will be handed. A UTF-8 byte-order mark is skipped; the rest must
// be one JSON object of at most [MaxSize] bytes ([ErrTooLarge]), strict
// JSON with no member named twice in an object, not even in another case
// ([ErrAmbiguousSpec]: encoding/json would keep one of them silently, and
// matches names without regard to case), whose fields the CRD schema
// defines, names matched case-sensitively (*[SchemaError]: a field the API
// server would prune is an error here), holding every member
// New-CredentialSpec writes ([ErrInvalidSpec]): CmsPlugins, the six of
// DomainJoinConfig, and at least one GroupManagedServiceAccounts entry with
// its Name and Scope. No error quotes the input: a file given by mistake (a
// token, a key) stays out of messages and logs.
func ParseCredentialSpec(data []byte) (*CredentialSpec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(data) > MaxSize {
		return nil, tooLarge("credential spec", int64(len(data)), MaxSize)
	}
	if err := checkOneMeaning(data); err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, invalid("not a JSON object", err)
	}
	if err := checkSchema(raw, credSpecSchema(), ContentsField); err != nil {
		return nil, err
	}
	var spec CredentialSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, invalid("not a JSON object", err)
	}
	if missing := missingMember(&spec); missing != "" {
		return nil, invalid("missing member "+strconv.Quote(missing), nil)
	}
	return &spec, nil
}

// checkOneMeaning refuses JSON that parsers may read differently: text
// that is not strict JSON, or an object naming a member twice, compared
// without regard to case as encoding/json matches names. The error matches
// [ErrAmbiguousSpec] and quotes no input but a member's name.
func checkOneMeaning(data []byte) error {
	seen := map[string]map[string]bool{}
	var dup *jsonx.Member
	err := jsonx.Walk(data, maxSpecDepth, func(m jsonx.Member) bool {
		names := seen[m.Path]
		if names == nil {
			names = map[string]bool{}
			seen[m.Path] = names
		}
		folded := strings.ToLower(m.Name)
		if names[folded] && dup == nil {
			dup = &m
		}
		names[folded] = true
		return false
	})
	if err != nil {
		// The reader's messages quote at most one character of the input.
		return invalid("not strict JSON", err)
	}
	if dup != nil {
		path := strings.TrimPrefix(strings.TrimPrefix(dup.Path, "$"), ".")
		if path != "" {
			path += "."
		}
		return errs.Wrap(prefix, ErrAmbiguousSpec, fmt.Sprintf("member %q appears twice", boundName(path+dup.Name)), nil)
	}
	return nil
}

// boundName cuts a member name to 64 bytes for a message.
func boundName(s string) string {
	if len(s) <= 64 {
		return s
	}
	return strings.ToValidUTF8(s[:64], "") + "..."
}

// missingMember names the first member New-CredentialSpec writes that spec
// lacks, or "".
func missingMember(spec *CredentialSpec) string {
	if len(spec.CMSPlugins) == 0 {
		return "CmsPlugins"
	}
	d := spec.DomainJoinConfig
	if d == nil {
		return "DomainJoinConfig"
	}
	for _, m := range []struct{ name, v string }{
		{"DnsName", d.DNSName}, {"DnsTreeName", d.DNSTreeName}, {"Guid", d.GUID},
		{"MachineAccountName", d.MachineAccountName}, {"NetBiosName", d.NetBIOSName}, {"Sid", d.SID},
	} {
		if m.v == "" {
			return "DomainJoinConfig." + m.name
		}
	}
	ad := spec.ActiveDirectoryConfig
	if ad == nil || len(ad.GroupManagedServiceAccounts) == 0 {
		return "ActiveDirectoryConfig.GroupManagedServiceAccounts"
	}
	for i, g := range ad.GroupManagedServiceAccounts {
		if g.Name == "" || g.Scope == "" {
			return fmt.Sprintf("ActiveDirectoryConfig.GroupManagedServiceAccounts[%d].Name and Scope", i)
		}
	}
	return ""
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
