package credspec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

// TestEffectiveSpecs walks every branch of DetermineEffectiveSecurityContext's
// Windows part.
func TestEffectiveSpecs(t *testing.T) {
	podOpts := &corev1.WindowsSecurityContextOptions{
		GMSACredentialSpecName: new("pod-name"), GMSACredentialSpec: new("pod-spec"),
		RunAsUserName: new("PodUser"), HostProcess: new(false),
	}
	tests := []struct {
		name     string
		podSC    *corev1.PodSecurityContext
		cSC      *corev1.SecurityContext
		want     *corev1.WindowsSecurityContextOptions
		wantFrom credspec.Origin
		wantSpec string
	}{
		{name: "neither"},
		{name: "pod_sc_without_windows", podSC: &corev1.PodSecurityContext{}},
		{name: "pod_only", podSC: &corev1.PodSecurityContext{WindowsOptions: podOpts}, want: podOpts, wantFrom: credspec.OriginPod, wantSpec: "pod-spec"},
		{name: "container_sc_without_windows_inherits", podSC: &corev1.PodSecurityContext{WindowsOptions: podOpts}, cSC: &corev1.SecurityContext{},
			want: podOpts, wantFrom: credspec.OriginPod, wantSpec: "pod-spec"},
		{name: "container_only_as_is", cSC: &corev1.SecurityContext{WindowsOptions: contentsOnly("c-spec")},
			want: contentsOnly("c-spec"), wantFrom: credspec.OriginContainer, wantSpec: "c-spec"},
		{name: "container_only_without_windows", cSC: &corev1.SecurityContext{}},
		{name: "pair_rule_name_only", podSC: &corev1.PodSecurityContext{WindowsOptions: podOpts}, cSC: &corev1.SecurityContext{WindowsOptions: named("c-name")},
			want:     &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("c-name"), RunAsUserName: new("PodUser"), HostProcess: new(false)},
			wantFrom: credspec.OriginContainer},
		{name: "pair_rule_contents_only", podSC: &corev1.PodSecurityContext{WindowsOptions: podOpts}, cSC: &corev1.SecurityContext{WindowsOptions: contentsOnly("c-spec")},
			want:     &corev1.WindowsSecurityContextOptions{GMSACredentialSpec: new("c-spec"), RunAsUserName: new("PodUser"), HostProcess: new(false)},
			wantFrom: credspec.OriginContainer, wantSpec: "c-spec"},
		{name: "field_overrides_keep_pair", podSC: &corev1.PodSecurityContext{WindowsOptions: podOpts},
			cSC:      &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: new("CUser"), HostProcess: new(true)}},
			want:     &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("pod-name"), GMSACredentialSpec: new("pod-spec"), RunAsUserName: new("CUser"), HostProcess: new(true)},
			wantFrom: credspec.OriginPod, wantSpec: "pod-spec"},
		{name: "pod_sc_without_windows_container_with", podSC: &corev1.PodSecurityContext{}, cSC: &corev1.SecurityContext{WindowsOptions: runAs("U")},
			want: runAs("U")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{
				SecurityContext:     tt.podSC,
				Containers:          []corev1.Container{{Name: "c", SecurityContext: tt.cSC}},
				InitContainers:      []corev1.Container{{Name: "i", SecurityContext: tt.cSC}},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", SecurityContext: tt.cSC}}},
			}}
			specs := credspec.EffectiveSpecs(pod)
			require.Len(t, specs, 3)
			for i, kind := range []credspec.LevelKind{credspec.LevelContainer, credspec.LevelInitContainer, credspec.LevelEphemeralContainer} {
				e := specs[i]
				assert.Equal(t, kind, e.Container.Kind)
				assert.Equal(t, 0, e.Container.Index)
				assert.Equal(t, tt.want, e.Options, kind.String())
				assert.Equal(t, tt.wantFrom, e.From, kind.String())
				assert.Equal(t, tt.wantSpec, e.CredentialSpec(), kind.String())
			}
			// The result is a copy: changing it leaves the pod alone.
			if e := specs[0]; e.Options != nil && e.Options.GMSACredentialSpec != nil {
				*e.Options.GMSACredentialSpec = "changed"
				assert.Equal(t, tt.wantSpec, credspec.EffectiveSpecs(pod)[0].CredentialSpec())
			}
		})
	}
	_, ok := credspec.EffectiveSpecFor(&corev1.Pod{}, credspec.LevelContainer, "missing")
	assert.False(t, ok)
}

func TestEffectiveSpecsAlpha(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			credspec.PodNameAnnotation:                    "pod-name",
			credspec.PodContentsAnnotation:                "pod-spec",
			credspec.ContainerNameAnnotation("own"):       "own-name",
			credspec.ContainerContentsAnnotation("own"):   "own-spec",
			credspec.ContainerNameAnnotation("nameonly"):  "ignored-name",
			credspec.ContainerContentsAnnotation("empty"): "",
		}},
		Spec: corev1.PodSpec{
			// Fields are ignored by the alpha rule.
			SecurityContext: &corev1.PodSecurityContext{WindowsOptions: contentsOnly("field-spec")},
			Containers:      []corev1.Container{{Name: "own"}, {Name: "nameonly"}, {Name: "empty"}, {Name: "plain"}},
			InitContainers:  []corev1.Container{{Name: "own"}},
		},
	}
	assert.Equal(t, "own.container.alpha.windows.kubernetes.io/gmsa-credential-spec-name", credspec.ContainerNameAnnotation("own"))
	got := map[string]credspec.Effective{}
	for _, e := range credspec.EffectiveSpecsAlpha(pod) {
		got[e.Container.Kind.String()+"/"+e.Container.Name] = e
	}
	require.Len(t, got, 5)
	assert.Equal(t, "own-spec", got["container/own"].CredentialSpec())
	assert.Equal(t, "own-name", got["container/own"].CredentialSpecName())
	assert.Equal(t, credspec.OriginContainerAnnotation, got["container/own"].From)
	assert.Equal(t, "own-spec", got["init container/own"].CredentialSpec())
	for _, c := range []string{"nameonly", "empty", "plain"} {
		assert.Equal(t, "pod-spec", got["container/"+c].CredentialSpec(), c)
		assert.Equal(t, "pod-name", got["container/"+c].CredentialSpecName(), c)
		assert.Equal(t, credspec.OriginPodAnnotation, got["container/"+c].From, c)
	}

	delete(pod.Annotations, credspec.PodContentsAnnotation)
	for _, e := range credspec.EffectiveSpecsAlpha(pod) {
		if e.Container.Name != "own" {
			assert.Equal(t, credspec.OriginNone, e.From)
			assert.Nil(t, e.Options)
		}
	}
}
