package providerconfig

import (
	"encoding/json"
	"slices"
)

// NodeAudienceVerb is the verb the NodeRestriction admission plugin asks
// the authorizer about when a kubelet requests a token for an audience no
// volume of the pod names: the node needs it on the resource named as the
// audience, in the core API group, in the service account's namespace
// (and on its name, when resourceNames narrow it).
const NodeAudienceVerb = "request-serviceaccounts-token-audience"

// NodesGroup is the group every kubelet's user is in.
const NodesGroup = "system:nodes"

// object is the part of an RBAC object the manifests need.
type object struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Rules      []rule         `json:"rules,omitempty"`
	RoleRef    *roleRef       `json:"roleRef,omitempty"`
	Subjects   []subject      `json:"subjects,omitempty"`
}

type rule struct {
	APIGroups []string `json:"apiGroups"`
	Resources []string `json:"resources"`
	Verbs     []string `json:"verbs"`
}

type roleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

type subject struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// NodeAudienceRBAC returns the ClusterRole and ClusterRoleBinding, as a
// v1 List of JSON (kubectl apply -f takes it), that let every node request
// tokens for the audiences the config's providers name, which the
// NodeRestriction admission refuses otherwise (kube-apiserver 1.33 and
// later, ServiceAccountNodeAudienceRestriction). name names both objects.
func NodeAudienceRBAC(name string, c *Config) ([]byte, error) {
	auds := Audiences(c)
	objs := []object{
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Metadata: map[string]any{"name": name},
			Rules: []rule{{APIGroups: []string{""}, Resources: auds, Verbs: []string{NodeAudienceVerb}}}},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Metadata: map[string]any{"name": name},
			RoleRef:  &roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects: []subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: NodesGroup}}},
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Audiences returns the token audiences of c's providers, sorted, each
// once.
func Audiences(c *Config) []string {
	var out []string
	for _, p := range c.Providers {
		if p.TokenAttributes != nil && p.TokenAttributes.ServiceAccountTokenAudience != "" {
			out = append(out, p.TokenAttributes.ServiceAccountTokenAudience)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
