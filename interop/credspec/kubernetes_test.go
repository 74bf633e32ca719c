package credspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	webhookerrors "k8s.io/apiserver/pkg/admission/plugin/webhook/errors"
	webhookrequest "k8s.io/apiserver/pkg/admission/plugin/webhook/request"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/securitycontext"

	ksacredspec "github.com/ksa-go/ksa/credspec"
)

// randomOptions returns nil, an empty block, or a block with a random
// subset of fields.
func randomOptions(rng *mrand.Rand, tag string) *corev1.WindowsSecurityContextOptions {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return &corev1.WindowsSecurityContextOptions{}
	}
	o := &corev1.WindowsSecurityContextOptions{}
	if rng.IntN(2) == 0 {
		o.GMSACredentialSpecName = new(tag + "-name")
	}
	if rng.IntN(2) == 0 {
		o.GMSACredentialSpec = new(tag + "-spec")
	}
	if rng.IntN(2) == 0 {
		o.RunAsUserName = new(tag + "-user")
	}
	if rng.IntN(2) == 0 {
		o.HostProcess = new(rng.IntN(2) == 0)
	}
	return o
}

func randomPod(rng *mrand.Rand) *corev1.Pod {
	pod := &corev1.Pod{}
	if rng.IntN(3) > 0 {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: randomOptions(rng, "pod")}
	}
	sc := func(tag string) *corev1.SecurityContext {
		if rng.IntN(3) == 0 {
			return nil
		}
		return &corev1.SecurityContext{WindowsOptions: randomOptions(rng, tag)}
	}
	for i := range rng.IntN(3) {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), SecurityContext: sc(fmt.Sprintf("c%d", i))})
	}
	for i := range rng.IntN(2) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: fmt.Sprintf("i%d", i), SecurityContext: sc(fmt.Sprintf("i%d", i))})
	}
	for i := range rng.IntN(2) {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: fmt.Sprintf("e%d", i), SecurityContext: sc(fmt.Sprintf("e%d", i))},
		})
	}
	return pod
}

// kubeletOptions is what the kubelet computes for each container, in
// EffectiveSpecs' order.
func kubeletOptions(pod *corev1.Pod) []*corev1.WindowsSecurityContextOptions {
	var out []*corev1.WindowsSecurityContextOptions
	for i := range pod.Spec.Containers {
		out = append(out, securitycontext.DetermineEffectiveSecurityContext(pod, &pod.Spec.Containers[i]).WindowsOptions)
	}
	for i := range pod.Spec.InitContainers {
		out = append(out, securitycontext.DetermineEffectiveSecurityContext(pod, &pod.Spec.InitContainers[i]).WindowsOptions)
	}
	for i := range pod.Spec.EphemeralContainers {
		c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, securitycontext.DetermineEffectiveSecurityContext(pod, &c).WindowsOptions)
	}
	return out
}

func checkEffective(t *testing.T, seed uint64) {
	pod := randomPod(mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	want := kubeletOptions(pod)
	got := ksacredspec.EffectiveSpecs(pod)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i].Options, "seed %d, container %s", seed, got[i].Container)
	}
}

// TestEffectiveSpecsAgainstKubelet holds EffectiveSpecs to
// k8s.io/kubernetes/pkg/securitycontext.DetermineEffectiveSecurityContext on
// random pods.
func TestEffectiveSpecsAgainstKubelet(t *testing.T) {
	for seed := range uint64(5000) {
		checkEffective(t, seed)
	}
}

func FuzzEffectiveSpecsAgainstKubelet(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed)
	}
	f.Fuzz(checkEffective)
}

func toCore(o *corev1.WindowsSecurityContextOptions) *core.SecurityContext {
	return &core.SecurityContext{WindowsOptions: &core.WindowsSecurityContextOptions{
		GMSACredentialSpecName: o.GMSACredentialSpecName,
		GMSACredentialSpec:     o.GMSACredentialSpec,
		RunAsUserName:          o.RunAsUserName,
		HostProcess:            o.HostProcess,
	}}
}

func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// FuzzCheckWindowsOptionsAgainstKubernetes holds CheckWindowsOptions
// to the API server's validation of the same fields.
func FuzzCheckWindowsOptionsAgainstKubernetes(f *testing.F) {
	for _, s := range [][3]string{
		{"webapp01", `{"a":1}`, "ContainerUser"},
		{"not_valid", "", "Network Service\\Container. User"},
		{"", strings.Repeat("a", 65537), "\\User"},
		{strings.Repeat("a", 254), "x", "Container\tUser"},
		{"a.b", "x", "... ..."},
		{"a", "x", "dom\\us@r"},
		{"a", "x", strings.Repeat("d", 256) + "\\u"},
		{"a", "x", "dom\\" + strings.Repeat("u", 105)},
		{"a", "x", "a\\b\\c"},
		{"a", "x", "é\\ü"},
	} {
		f.Add(s[0], s[1], s[2], uint8(7))
	}
	f.Fuzz(func(t *testing.T, name, contents, user string, set uint8) {
		o := &corev1.WindowsSecurityContextOptions{}
		if set&1 != 0 {
			o.GMSACredentialSpecName = &name
		}
		if set&2 != 0 {
			o.GMSACredentialSpec = &contents
		}
		if set&4 != 0 {
			o.RunAsUserName = &user
		}
		path := field.NewPath("spec", "securityContext")
		want := corevalidation.ValidateSecurityContext(toCore(o), path, false, false)
		got := ksacredspec.CheckWindowsOptions(o, path.Child("windowsOptions"))
		require.Equal(t, errorStrings(want), errorStrings(got))
	})
}

// TestCRDAgainstAPIExtensions validates the embedded CRD with the API
// server's own CRD validation, and checks that the API server would prune
// exactly the fields the strict decoder refuses.
func TestCRDAgainstAPIExtensions(t *testing.T) {
	j, err := ksacredspec.CRDJSON()
	require.NoError(t, err)
	var v1crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, json.Unmarshal(j, &v1crd))
	scheme := runtime.NewScheme()
	apiextensionsinstall.Install(scheme)
	scheme.Default(&v1crd) // as the API server does: singular, listKind
	var crd apiextensions.CustomResourceDefinition
	require.NoError(t, scheme.Convert(&v1crd, &crd, nil))
	crd.Status.StoredVersions = []string{"v1"}
	assert.Empty(t, crdvalidation.ValidateCustomResourceDefinition(t.Context(), &crd))

	// Identical per-version schemas are hoisted to spec.validation by the
	// conversion to the internal type.
	require.Len(t, crd.Spec.Versions, 2)
	require.NotNil(t, crd.Spec.Validation)
	structural, err := structuralschema.NewStructural(crd.Spec.Validation.OpenAPIV3Schema)
	require.NoError(t, err)

	for name, manifest := range map[string]string{
		"full": `{"credspec":{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"a","DnsTreeName":"a","Guid":"g","MachineAccountName":"m","NetBiosName":"N","Sid":"S"},
			"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":"m","Scope":"a"}],"HostAccountConfig":{"PluginGUID":"{x}","PluginInput":"i","PortableCcgVersion":"1"}}}}`,
		"top_level_extra":  `{"credspec":{},"spec":{"x":1}}`,
		"unknown_field":    `{"credspec":{"Extra":1}}`,
		"wrong_case":       `{"credspec":{"DomainJoinConfig":{"dnsName":"a"}}}`,
		"nested_unknown":   `{"credspec":{"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":"m","Domain":"d"}]}}}`,
		"host_account_bad": `{"credspec":{"ActiveDirectoryConfig":{"HostAccountConfig":{"PluginGuid":"x"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(manifest), &obj))
			obj["apiVersion"], obj["kind"], obj["metadata"] = "windows.k8s.io/v1", "GMSACredentialSpec", map[string]any{"name": "x"}
			before, err := json.Marshal(obj)
			require.NoError(t, err)
			pruning.Prune(obj, structural, true)
			after, err := json.Marshal(obj)
			require.NoError(t, err)
			pruned := string(before) != string(after)

			_, decodeErr := ksacredspec.Decode(before)
			assert.Equal(t, pruned, decodeErr != nil, "pruned %v, decode error %v", pruned, decodeErr)
			if decodeErr != nil {
				assert.ErrorIs(t, decodeErr, ksacredspec.ErrInvalidSpec)
				var schemaErr *ksacredspec.SchemaError
				assert.ErrorAs(t, decodeErr, &schemaErr)
			}
		})
	}
}

// apiServer plays the API server's webhook client: it sends a review of the
// requested version and reads the answer with the API server's own code.
func apiServer(t *testing.T, h http.Handler, path, version string, pod *corev1.Pod) (*webhookrequest.AdmissionResponse, *corev1.Pod) {
	t.Helper()
	raw, err := json.Marshal(pod)
	require.NoError(t, err)
	uid := types.UID("4b0c6f51-3c5a-4e2e-9f2c-1d2f3a4b5c6d")
	req := &admissionv1.AdmissionRequest{
		UID: uid, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "apps",
		Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
	}
	var body []byte
	if version == "v1" {
		body, err = json.Marshal(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	} else {
		var beta admissionv1beta1.AdmissionRequest
		b, _ := json.Marshal(req)
		require.NoError(t, json.Unmarshal(b, &beta))
		body, err = json.Marshal(&admissionv1beta1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1beta1", Kind: "AdmissionReview"}, Request: &beta})
	}
	require.NoError(t, err)
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusOK, rec.Code)
	var review runtime.Object
	if version == "v1" {
		review = &admissionv1.AdmissionReview{}
	} else {
		review = &admissionv1beta1.AdmissionReview{}
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), review))
	resp, err := webhookrequest.VerifyAdmissionResponse(uid, path == ksacredspec.MutatePath, review)
	require.NoError(t, err)
	if len(resp.Patch) == 0 {
		return resp, pod
	}
	require.Equal(t, admissionv1.PatchTypeJSONPatch, resp.PatchType)
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	require.NoError(t, err)
	patched, err := patch.Apply(raw)
	require.NoError(t, err)
	var out corev1.Pod
	require.NoError(t, json.Unmarshal(patched, &out))
	return resp, &out
}

// TestHandlerAgainstAPIServerClient runs the handler's answers through the
// API server's webhook response checks, JSON Patch library and denial
// formatting, for both review versions.
func TestHandlerAgainstAPIServerClient(t *testing.T) {
	src, err := ksacredspec.NewStaticSourceJSON(map[string]string{"webapp01": `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"NetBiosName":"CONTOSO"}}`})
	require.NoError(t, err)
	authz := ksacredspec.AuthorizerFunc(func(_ context.Context, r ksacredspec.UseRequest) (ksacredspec.Decision, error) {
		return ksacredspec.Decision{Allowed: r.User.Username == "system:serviceaccount:apps:frontend"}, nil
	})
	exp, err := ksacredspec.NewExpander(ksacredspec.ExpanderConfig{Source: src})
	require.NoError(t, err)
	val, err := ksacredspec.NewValidator(ksacredspec.ValidatorConfig{Source: src, Authorizer: authz})
	require.NoError(t, err)
	h, err := ksacredspec.NewHandler(ksacredspec.HandlerConfig{Expander: exp, Validator: val})
	require.NoError(t, err)

	for _, version := range []string{"v1", "v1beta1"} {
		t.Run(version, func(t *testing.T) {
			p := pod("frontend", nil)
			p.Spec.Containers = []corev1.Container{{Name: "app", Image: "i"}, {Name: "side", Image: "i",
				SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}}}}
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i",
				SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}}}}
			resp, stored := apiServer(t, h, ksacredspec.MutatePath, version, p)
			require.True(t, resp.Allowed)
			want := `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"NetBiosName":"CONTOSO"}}`
			assert.Equal(t, map[string]string{"app": "", "side": want, "init": want}, effective(stored))

			resp, _ = apiServer(t, h, ksacredspec.ValidatePath, version, stored)
			assert.True(t, resp.Allowed)

			stored.Spec.ServiceAccountName = "batch"
			resp, _ = apiServer(t, h, ksacredspec.ValidatePath, version, stored)
			require.False(t, resp.Allowed)
			statusErr := webhookerrors.ToStatusErr("admission-webhook.windows-gmsa.sigs.k8s.io", resp.Result)
			assert.Equal(t, int32(http.StatusForbidden), statusErr.ErrStatus.Code)
			assert.Equal(t, "admission webhook \"admission-webhook.windows-gmsa.sigs.k8s.io\" denied the request: service account \"batch\" is not authorized to `use` GMSA cred spec \"webapp01\"", statusErr.Error())
		})
	}
}

func effective(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, e := range ksacredspec.EffectiveSpecs(pod) {
		out[e.Container.Name] = e.CredentialSpec()
	}
	return out
}
