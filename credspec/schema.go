package credspec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// schemaNode is a node of the CRD's structural schema for credspec.
type schemaNode struct {
	typ   string // "object", "array", "string"
	props map[string]*schemaNode
	items *schemaNode
}

// credSpecSchema mirrors the openAPIV3Schema of credspec in crd.yaml (a
// test holds the two together).
var credSpecSchema = sync.OnceValue(func() *schemaNode {
	str := &schemaNode{typ: "string"}
	obj := func(props map[string]*schemaNode) *schemaNode { return &schemaNode{typ: "object", props: props} }
	return obj(map[string]*schemaNode{
		"ActiveDirectoryConfig": obj(map[string]*schemaNode{
			"GroupManagedServiceAccounts": {typ: "array", items: obj(map[string]*schemaNode{"Name": str, "Scope": str})},
			"HostAccountConfig":           obj(map[string]*schemaNode{"PluginGUID": str, "PluginInput": str, "PortableCcgVersion": str}),
		}),
		"CmsPlugins": {typ: "array", items: str},
		"DomainJoinConfig": obj(map[string]*schemaNode{
			"DnsName": str, "DnsTreeName": str, "Guid": str, "MachineAccountName": str, "NetBiosName": str, "Sid": str,
		}),
	})
})

// checkSchema reports the first field of v (decoded with encoding/json) that
// the schema does not define, matching names case-sensitively as the API
// server does, or a value of the wrong type. null is accepted anywhere, as
// an absent value.
func checkSchema(v any, n *schemaNode, path string) error {
	if v == nil {
		return nil
	}
	switch n.typ {
	case "string":
		if _, ok := v.(string); !ok {
			return &SchemaError{Path: path, Reason: fmt.Sprintf("must be a string, got %s", jsonType(v))}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return &SchemaError{Path: path, Reason: fmt.Sprintf("must be an array, got %s", jsonType(v))}
		}
		for i, e := range a {
			if err := checkSchema(e, n.items, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return &SchemaError{Path: path, Reason: fmt.Sprintf("must be an object, got %s", jsonType(v))}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			child, ok := n.props[k]
			if !ok {
				return &SchemaError{Path: path + "." + k, Reason: "unknown field (known: " + strings.Join(propNames(n), ", ") + ")"}
			}
			if err := checkSchema(m[k], child, path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func propNames(n *schemaNode) []string {
	out := make([]string, 0, len(n.props))
	for k := range n.props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}
