package credspec_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ksa-go/ksa/credspec"
)

// TestConformanceKubernetes holds the library to Kubernetes' own tests of
// GMSA: the API validation of Windows security options
// (k8s.io/kubernetes/pkg/apis/core/validation), the container and sandbox
// configuration the kubelet passes to the runtime
// (k8s.io/kubernetes/pkg/kubelet/kuberuntime), and the kubelet e2e test of
// per-container credential specs.
func TestConformanceKubernetes(t *testing.T) {
	t.Run("48_validate_windows_options", func(t *testing.T) {
		tests := []struct {
			name    string
			opts    *corev1.WindowsSecurityContextOptions
			wantMsg string // "" means valid
			field   string
		}{
			{name: "nil"},
			{name: "empty", opts: &corev1.WindowsSecurityContextOptions{}},
			{name: "name_and_non_json_contents", opts: withContents("dummy-gmsa-crep-spec-name", "dummy-gmsa-crep-spec-contents")},
			{name: "invalid_name", opts: named("not_a-valid-gmsa-crep-spec-name"), field: "gmsaCredentialSpecName",
				wantMsg: "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"},
			{name: "empty_contents", opts: contentsOnly(""), field: "gmsaCredentialSpec", wantMsg: "gmsaCredentialSpec cannot be an empty string"},
			{name: "contents_of_65536_bytes", opts: contentsOnly(strings.Repeat("a", 65536))},
			{name: "contents_of_65537_bytes", opts: contentsOnly(strings.Repeat("a", 65537)), field: "gmsaCredentialSpec", wantMsg: "gmsaCredentialSpec size must be under 64 KiB"},
			{name: "user", opts: runAs("Container. User")},
			{name: "netbios_domain_user", opts: runAs("Network Service\\Container. User")},
			{name: "dns_domain_user", opts: runAs("contoso.com\\user")},
			{name: "empty_user_name", opts: runAs(""), field: "runAsUserName", wantMsg: "runAsUserName cannot be an empty string"},
			{name: "control_character", opts: runAs("Container\tUser"), field: "runAsUserName", wantMsg: "runAsUserName cannot contain control characters"},
			{name: "two_backslashes", opts: runAs("a\\b\\c"), field: "runAsUserName", wantMsg: "runAsUserName cannot contain more than one backslash"},
			{name: "empty_domain", opts: runAs("\\User"), field: "runAsUserName", wantMsg: "runAsUserName's Domain doesn't match the NetBios nor the DNS format"},
			{name: "long_domain", opts: runAs(strings.Repeat("a", 256) + "\\u"), field: "runAsUserName", wantMsg: "runAsUserName's Domain length must be under 256 characters"},
			{name: "empty_user", opts: runAs("Domain\\"), field: "runAsUserName", wantMsg: "runAsUserName's User cannot be empty"},
			{name: "user_of_104", opts: runAs(strings.Repeat("u", 104))},
			{name: "user_of_105", opts: runAs(strings.Repeat("u", 105)), field: "runAsUserName", wantMsg: "runAsUserName's User length must not be longer than 104 characters"},
			{name: "only_dots_and_spaces", opts: runAs("... ..."), field: "runAsUserName", wantMsg: "runAsUserName's User cannot contain only periods or spaces"},
			{name: "forbidden_character", opts: runAs("us@r"), field: "runAsUserName", wantMsg: `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				errs := credspec.CheckWindowsOptions(tt.opts, field.NewPath("spec", "securityContext", "windowsOptions"))
				if tt.wantMsg == "" {
					assert.Empty(t, errs)
					return
				}
				require.NotEmpty(t, errs)
				assert.Equal(t, field.ErrorTypeInvalid, errs[0].Type)
				assert.Equal(t, "spec.securityContext.windowsOptions."+tt.field, errs[0].Field)
				assert.Contains(t, errs.ToAggregate().Error(), tt.wantMsg)
			})
		}
	})

	t.Run("49_container_options_reach_the_runtime", func(t *testing.T) {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c",
			SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				GMSACredentialSpecName: new("gmsa spec name"),
				GMSACredentialSpec:     new("credential spec"),
				RunAsUserName:          new("ContainerAdministrator"),
				HostProcess:            new(true),
			}},
		}}}}
		e, ok := credspec.EffectiveSpecFor(pod, credspec.LevelContainer, "c")
		require.True(t, ok)
		assert.Equal(t, "credential spec", e.CredentialSpec())
		assert.Equal(t, "gmsa spec name", e.CredentialSpecName())
		assert.Equal(t, "ContainerAdministrator", *e.Options.RunAsUserName)
		assert.True(t, *e.Options.HostProcess)
		assert.Equal(t, credspec.OriginContainer, e.From)
	})

	t.Run("50_sandbox_gets_pod_level_contents_only", func(t *testing.T) {
		assert.Empty(t, credspec.SandboxCredentialSpec(&corev1.Pod{}))
		assert.Empty(t, credspec.SandboxCredentialSpec(&corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{}}}))
		assert.Equal(t, "gmsa-creds", credspec.SandboxCredentialSpec(gmsaPod("sa", contentsOnly("gmsa-creds"))))
		assert.Empty(t, credspec.SandboxCredentialSpec(gmsaPod("sa", runAs("SYSTEM"), nginx("c", contentsOnly("container-creds")))))
	})

	t.Run("51_container_overrides_pod_contents", func(t *testing.T) {
		pod := gmsaPod("sa", contentsOnly("acme.com spec"),
			nginx("container1", nil), nginx("container2", contentsOnly("contoso.org spec")))
		assert.Equal(t, map[string]string{"container1": "acme.com spec", "container2": "contoso.org spec"}, effectiveByName(t, pod))
	})
}

func runAs(user string) *corev1.WindowsSecurityContextOptions {
	return &corev1.WindowsSecurityContextOptions{RunAsUserName: new(user)}
}

// TestConformanceCodeDerived covers behaviours of windows-gmsa's and the
// kubelet's code that no upstream test covers: number forms, key case and
// null in the contents comparison, the name-and-contents pair rule of the
// effective spec, inheritance of the pod's pair, and init containers.
func TestConformanceCodeDerived(t *testing.T) {
	t.Run("52_number_forms_key_case_and_null", func(t *testing.T) {
		tests := []struct {
			name      string
			pod, crd  string
			wantEqual bool
		}{
			{name: "1_vs_1.0", pod: `{"a":1}`, crd: `{"a":1.0}`, wantEqual: true},
			{name: "key_case", pod: `{"a":"x"}`, crd: `{"A":"x"}`},
			{name: "null_vs_empty", pod: `null`, crd: `{}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				eq, err := credspec.Equal(tt.pod, tt.crd)
				require.NoError(t, err)
				assert.Equal(t, tt.wantEqual, eq)
			})
		}
	})

	t.Run("53_container_name_only_drops_pod_contents", func(t *testing.T) {
		pod := gmsaPod("sa", withContents("pod-spec", "pod contents"), nginx("c", named("container-spec")))
		e, ok := credspec.EffectiveSpecFor(pod, credspec.LevelContainer, "c")
		require.True(t, ok)
		assert.Empty(t, e.CredentialSpec())
		assert.Nil(t, e.Options.GMSACredentialSpec)
		assert.Equal(t, "container-spec", e.CredentialSpecName())
		assert.Equal(t, credspec.OriginContainer, e.From)
	})

	t.Run("54_container_run_as_only_keeps_pod_pair", func(t *testing.T) {
		pod := gmsaPod("sa", withContents("pod-spec", "pod contents"), nginx("c", runAs("User")))
		e, ok := credspec.EffectiveSpecFor(pod, credspec.LevelContainer, "c")
		require.True(t, ok)
		assert.Equal(t, "pod contents", e.CredentialSpec())
		assert.Equal(t, "pod-spec", e.CredentialSpecName())
		assert.Equal(t, "User", *e.Options.RunAsUserName)
		assert.Equal(t, credspec.OriginPod, e.From)
	})

	t.Run("55_init_container_expanded_and_authorized", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: dummyPodName, Namespace: dummyNamespace},
			Spec: corev1.PodSpec{
				ServiceAccountName: dummyServiceAccountName,
				InitContainers:     []corev1.Container{nginx("init", named(dummyCredSpecName))},
				Containers:         []corev1.Container{nginx("main", nil)},
			},
		}
		patch, err := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}}).ExpandCreate(t.Context(), pod)
		require.NoError(t, err)
		require.Len(t, patch, 1)
		assert.Equal(t, "/spec/initContainers/0/securityContext/windowsOptions/gmsaCredentialSpec", patch[0].Path)
		stored := applyPatch(t, pod, patch)
		e, ok := credspec.EffectiveSpecFor(stored, credspec.LevelInitContainer, "init")
		require.True(t, ok)
		assert.Equal(t, canonical(t, dummyCredSpecContents), e.CredentialSpec())

		err = newValidator(t, &fakeSource{}, &fakeAuthorizer{decide: denyName(dummyCredSpecName, "")}).ValidateCreate(t.Context(), dummyNamespace, stored, nil)
		d := requireDenial(t, err, http.StatusForbidden, credspec.ErrNotAuthorized,
			"service account \"dummy-service-account-name\" is not authorized to `use` GMSA cred spec \"dummy-cred-spec-name\"")
		assert.Equal(t, credspec.Level{Kind: credspec.LevelInitContainer, Name: "init", Index: 0}, *d.Level)
		assert.NotContains(t, d.Message, "reason")
	})
}
