package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/deploy"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// root is the repository's root, from this package's directory.
const root = "../.."

var chartDir = filepath.Join(root, deploy.ChartDir)

// caBundle is a base64 value for webhook.tls.caBundle (its contents are
// not read by the chart).
const caBundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="

// valueSets are the values the tests render the chart with: each set of
// the plain manifests, and every switch on.
func valueSets() []struct {
	name   string
	values map[string]any
} {
	sets := []struct {
		name   string
		values map[string]any
	}{}
	for _, s := range deploy.Sets() {
		sets = append(sets, struct {
			name   string
			values map[string]any
		}{name: "manifests/" + s.Dir, values: s.Values})
	}
	sets = append(sets, struct {
		name   string
		values map[string]any
	}{name: "everything on, webhook certificate from a Secret", values: map[string]any{
		"image": map[string]any{"digest": "sha256:" + strings.Repeat("ab", 32)},
		"podcert": map[string]any{
			"allowHosts": []any{"{serviceaccount}.{namespace}.svc"}, "allowIPHosts": []any{"10.0.0.0/8"},
			"allowExtensions": true, "trustBundle": "example.com:pods:other",
			"ca":                map[string]any{"keyURI": "awskms:///alias/podcert-ca"},
			"extraArgs":         []any{"--workers=8"},
			"env":               []any{map[string]any{"name": "AWS_REGION", "value": "eu-west-1"}},
			"priorityClassName": "system-cluster-critical",
			"serviceMonitor":    map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}},
			"networkPolicy": map[string]any{"enabled": true, "metricsFrom": []any{map[string]any{
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}}},
		},
		"webhook": map[string]any{
			"enabled": true,
			"credSpecs": []any{map[string]any{
				"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec",
				"metadata": map[string]any{"name": "webapp01"}, "credspec": map[string]any{"ActiveDirectoryConfig": map[string]any{}},
			}},
			"allow":         map[string]any{"system:serviceaccount:web:frontend": []any{"webapp01"}},
			"tls":           map[string]any{"certManager": map[string]any{"enabled": false}, "caBundle": caBundle},
			"networkPolicy": map[string]any{"enabled": true},
		},
	}})
	return sets
}

// decoder decodes strictly with client-go's scheme: an unknown or
// duplicated field is an error.
var decoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// crdKinds are the kinds of custom resources the chart renders, which
// client-go's scheme does not know: they are decoded strictly as YAML.
var crdKinds = []string{"cert-manager.io/v1 Issuer", "cert-manager.io/v1 Certificate", "monitoring.coreos.com/v1 ServiceMonitor"}

// decodeAll decodes every document of a manifest strictly.
func decodeAll(t *testing.T, manifest string) []runtime.Object {
	t.Helper()
	docs, err := deploy.Documents([]byte(manifest))
	require.NoError(t, err)
	var objs []runtime.Object
	for _, doc := range docs {
		var meta struct{ APIVersion, Kind string }
		require.NoError(t, yaml.Unmarshal(doc, &meta))
		if slices.Contains(crdKinds, meta.APIVersion+" "+meta.Kind) {
			var m map[string]any
			require.NoError(t, yaml.UnmarshalStrict(doc, &m), "%s", doc)
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		require.NoError(t, err, "%s", doc)
		objs = append(objs, obj)
	}
	return objs
}

func TestLint(t *testing.T) {
	for _, tc := range valueSets() {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, deploy.Lint(chartDir, tc.values))
		})
	}
}

// TestRender renders the chart with each set of values and decodes every
// object strictly; each pod template holds the restricted Pod Security
// settings and runs the ksa image with a subcommand.
func TestRender(t *testing.T) {
	for _, tc := range valueSets() {
		t.Run(tc.name, func(t *testing.T) {
			manifest, err := deploy.Render(chartDir, deploy.Release, deploy.Namespace, tc.values)
			require.NoError(t, err)
			objs := decodeAll(t, manifest)
			require.NotEmpty(t, objs)
			for _, obj := range objs {
				d, ok := obj.(*appsv1.Deployment)
				if !ok {
					continue
				}
				assert.Equal(t, int32(2), *d.Spec.Replicas)
				checkRestricted(t, d.Spec.Template.Spec)
			}
		})
	}
}

// checkRestricted checks the restricted Pod Security settings of a pod.
func checkRestricted(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	psc := spec.SecurityContext
	require.NotNil(t, psc)
	assert.True(t, *psc.RunAsNonRoot)
	assert.Equal(t, int64(65532), *psc.RunAsUser)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		require.NotNil(t, sc, c.Name)
		assert.False(t, *sc.AllowPrivilegeEscalation, c.Name)
		assert.True(t, *sc.ReadOnlyRootFilesystem, c.Name)
		assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, c.Name)
		assert.True(t, strings.HasPrefix(c.Image, "ghcr.io/ksa-go/ksa"), c.Image)
		assert.Empty(t, c.Command, "the image's entrypoint is ksa; args name the subcommand")
	}
}

// TestManifestsDoNotDrift checks that deploy/manifests is what "go run
// ./deploy/render" writes from the chart, file for file.
func TestManifestsDoNotDrift(t *testing.T) {
	want, err := deploy.Files(root)
	require.NoError(t, err)
	var got []string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, deploy.ManifestsDir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		got = append(got, filepath.ToSlash(rel))
		return nil
	}))
	var names []string
	for name, data := range want {
		names = append(names, name)
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		require.NoError(t, err, "run: cd interop && go run ./deploy/render")
		assert.Equal(t, string(data), string(b), "%s drifted from the chart; run: cd interop && go run ./deploy/render", name)
	}
	slices.Sort(names)
	slices.Sort(got)
	assert.Equal(t, names, got, "deploy/manifests holds files the chart does not render")
}

// TestPodcertRBAC checks that the signer's ServiceAccount, ClusterRole and
// ClusterRoleBinding grant what "ksa podcert rbac" prints (podcertctl's
// Manifests), plus the Role for the leader election's Lease.
func TestPodcertRBAC(t *testing.T) {
	manifest, err := deploy.Render(chartDir, deploy.Release, deploy.Namespace, map[string]any{
		"podcert": map[string]any{"signerName": "pods.example.org/workloads"}})
	require.NoError(t, err)
	want, err := podcertctl.Manifests(podcertctl.RBACConfig{SignerName: "pods.example.org/workloads",
		Namespace: deploy.Namespace, ServiceAccount: "ksa-podcert", OmitNamespace: true})
	require.NoError(t, err)
	wantObjs := decodeAll(t, string(want))
	gotObjs := decodeAll(t, manifest)
	var wantLeases *rbacv1.Role
	var wantRole, gotRole *rbacv1.ClusterRole
	var wantBinding, gotBinding *rbacv1.ClusterRoleBinding
	var gotSA bool
	var leases *rbacv1.Role
	for _, o := range wantObjs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			wantRole = o
		case *rbacv1.ClusterRoleBinding:
			wantBinding = o
		case *rbacv1.Role:
			wantLeases = o
		}
	}
	for _, o := range gotObjs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			gotRole = o
		case *rbacv1.ClusterRoleBinding:
			gotBinding = o
		case *rbacv1.Role:
			leases = o
		case *corev1.ServiceAccount:
			gotSA = o.Name == "ksa-podcert" && o.Namespace == deploy.Namespace
		}
	}
	require.NotNil(t, gotRole)
	require.NotNil(t, gotBinding)
	assert.True(t, gotSA)
	assert.Equal(t, wantRole.Name, gotRole.Name)
	assert.Equal(t, wantRole.Rules, gotRole.Rules)
	assert.Equal(t, wantBinding.Name, gotBinding.Name)
	assert.Equal(t, wantBinding.RoleRef, gotBinding.RoleRef)
	assert.Equal(t, wantBinding.Subjects, gotBinding.Subjects)
	require.NotNil(t, leases)
	assert.Equal(t, wantRole.Name, leases.Name)
	if wantLeases != nil {
		// A ksa that elects a leader prints the Role of its Lease.
		assert.Equal(t, wantLeases.Rules, leases.Rules)
		return
	}
	// The Role "ksa podcert rbac" prints once the signer elects a leader
	// by a Lease: create Leases, read and update its own.
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"ksa-podcert.pods.example.org.workloads"},
			Verbs: []string{"get", "update"}},
	}, leases.Rules)
}

// TestValuesMatchSchema checks that every value of values.yaml is in
// values.schema.json, with a description, and every property of the schema
// is in values.yaml; a schema object without properties (resources,
// securityContext) takes any object and ends the walk.
func TestValuesMatchSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	require.NoError(t, err)
	var values map[string]any
	require.NoError(t, yaml.Unmarshal(b, &values))
	b, err = os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	require.NoError(t, err)
	var schema schemaNode
	require.NoError(t, json.Unmarshal(b, &schema))
	var problems []string
	compare(&problems, "", values, schema)
	assert.Empty(t, problems)
}

type schemaNode struct {
	Type        string                `json:"type"`
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
}

func compare(problems *[]string, path string, values map[string]any, schema schemaNode) {
	for k, v := range values {
		p := strings.TrimPrefix(path+"."+k, ".")
		s, ok := schema.Properties[k]
		if !ok {
			*problems = append(*problems, p+": in values.yaml, not in the schema")
			continue
		}
		if s.Description == "" {
			*problems = append(*problems, p+": no description in the schema")
		}
		if m, ok := v.(map[string]any); ok && s.Properties != nil {
			compare(problems, p, m, s)
		}
	}
	for k := range schema.Properties {
		if _, ok := values[k]; !ok {
			*problems = append(*problems, strings.TrimPrefix(path+"."+k, ".")+": in the schema, not in values.yaml")
		}
	}
}

// TestValuesRefused checks that the schema and the templates refuse bad
// values, naming them.
func TestValuesRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
		// linted: helm lint reports a template's fail call as
		// information, not as an error.
		linted bool
	}{
		{name: "unknown value", values: map[string]any{"podcert": map[string]any{"replica": 2}}, want: "replica"},
		{name: "no replica", values: map[string]any{"podcert": map[string]any{"replicas": 0}}, want: "replicas"},
		{name: "bad pull policy", values: map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, want: "pullPolicy"},
		{name: "signer name without a path", values: map[string]any{"podcert": map[string]any{"signerName": "example.com"}}, want: "signerName"},
		{name: "lifetime not a duration", values: map[string]any{"podcert": map[string]any{"maxLifetime": "1 day"}}, want: "maxLifetime"},
		{name: "key URI of no key store", values: map[string]any{"podcert": map[string]any{"ca": map[string]any{"keyURI": "file:///ca.key"}}}, want: "keyURI"},
		{name: "webhook certificate without its CA", values: map[string]any{"webhook": map[string]any{"enabled": true,
			"tls": map[string]any{"certManager": map[string]any{"enabled": false}}}}, want: "webhook.tls.caBundle", linted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deploy.Render(chartDir, deploy.Release, deploy.Namespace, tc.values)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if !tc.linted {
				assert.Error(t, deploy.Lint(chartDir, tc.values))
			}
		})
	}
}

// BenchmarkRender measures one "helm template" of the chart's defaults.
func BenchmarkRender(b *testing.B) {
	for b.Loop() {
		if _, err := deploy.Render(chartDir, deploy.Release, deploy.Namespace, nil); err != nil {
			b.Fatal(err)
		}
	}
}
