package apiserver_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/interop/controlplane"
	gmsaclient "github.com/ksa-go/ksa/interop/credspec"
)

// gmsaCluster is the control plane with the GMSACredentialSpec CRD
// installed, two credential specs stored, and ksa's webhook registered for
// one labelled namespace.
type gmsaCluster struct {
	cp       *controlplane.ControlPlane
	ns       string
	contents map[string]string // canonical contents by object name
}

func setupGMSA(t *testing.T, cp *controlplane.ControlPlane) *gmsaCluster {
	t.Helper()
	ctx := t.Context()
	g := &gmsaCluster{cp: cp, ns: cp.Namespace(t), contents: map[string]string{}}

	// The CRD, established.
	var crd apiextensionsv1.CustomResourceDefinition
	crdJSON, err := credspec.CRDJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(crdJSON, &crd))
	ext, err := apiextensionsclient.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	waitEstablished(t, ext, crd.Name)

	// Credential specs from windows-gmsa's fixtures (credspec-1 stored as
	// v1alpha1).
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	for _, file := range []string{"credspec-0.yml", "credspec-1.yml", "credspec-with-hostaccountconfig.yml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "credspec", "testdata", file))
		require.NoError(t, err)
		obj := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(data, &obj.Object))
		gvr := credspec.GroupVersionResource()
		gvr.Version = obj.GroupVersionKind().Version
		_, err = dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		spec, _, err := unstructured.NestedMap(obj.Object, "credspec")
		require.NoError(t, err)
		raw, err := json.Marshal(spec)
		require.NoError(t, err)
		canonical, err := credspec.Canonical(string(raw))
		require.NoError(t, err)
		g.contents[obj.GetName()] = canonical
	}

	// ksa's webhook, over TLS on loopback, with a client-go source and
	// SubjectAccessReview authorizer.
	source, err := gmsaclient.NewSource(dyn)
	require.NoError(t, err)
	authz, err := gmsaclient.NewAuthorizer(cp.Clientset())
	require.NoError(t, err)
	expander, err := credspec.NewExpander(credspec.ExpanderConfig{Source: source})
	require.NoError(t, err)
	validator, err := credspec.NewValidator(credspec.ValidatorConfig{Source: source, Authorizer: authz})
	require.NoError(t, err)
	handler, err := credspec.NewHandler(credspec.HandlerConfig{Expander: expander, Validator: validator})
	require.NoError(t, err)
	cert, err := cp.ServingCert("127.0.0.1")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	// Registered for this test's namespace only (the control plane is
	// shared), removed when the test ends.
	labels := map[string]string{"ksa.test/gmsa": g.ns}
	nsObj, err := cp.Clientset().CoreV1().Namespaces().Get(ctx, g.ns, metav1.GetOptions{})
	require.NoError(t, err)
	nsObj.Labels = labels
	_, err = cp.Clientset().CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
	require.NoError(t, err)
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	selector := &metav1.LabelSelector{MatchLabels: labels}
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		url := srv.URL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: cp.CAPEM}
	}
	rules := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{
			Operations: ops,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}, {
			// Ephemeral containers arrive as updates of this subresource.
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/ephemeralcontainers"}},
		}}
	}
	name := "ksa-gmsa-" + g.ns
	arc := cp.Clientset().AdmissionregistrationV1()
	_, err = arc.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.gmsa.ksa.test", ClientConfig: client(credspec.MutatePath), Rules: rules(admissionregistrationv1.Create),
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: selector,
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = arc.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validate.gmsa.ksa.test", ClientConfig: client(credspec.ValidatePath), Rules: rules(admissionregistrationv1.Create, admissionregistrationv1.Update),
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: selector,
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = arc.MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		_ = arc.ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	})

	// RBAC: the service account "granted" may use credspec-0 and credspec-1;
	// "denied" may not.
	rbac := cp.Clientset().RbacV1()
	_, err = rbac.Roles(g.ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "use-gmsa"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{credspec.Group}, Resources: []string{credspec.Resource}, Verbs: []string{credspec.VerbUse},
			ResourceNames: []string{"credspec-0", "credspec-1", "credspec-hostaccountconfig"},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.RoleBindings(g.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "use-gmsa"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "use-gmsa"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "granted", Namespace: g.ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, sa := range []string{"granted", "denied"} {
		_, err = cp.Clientset().CoreV1().ServiceAccounts(g.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return g
}

func waitEstablished(t *testing.T, ext apiextensionsclient.Interface, name string) {
	t.Helper()
	w, err := ext.ApiextensionsV1().CustomResourceDefinitions().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	require.NoError(t, err)
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			continue
		}
		crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
	}
	t.Fatalf("CRD %s never became established", name)
}

func strPtr(s string) *string { return &s }

// gmsaPod builds a pod using sa; podName/containerNames set names at the
// pod and container levels ("" for none), podContents pre-sets contents.
func gmsaPod(name, sa string, podSpec *string, containerSpecs map[string]*string, podContents *string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			ServiceAccountName:           sa,
			AutomountServiceAccountToken: boolPtr(false),
			OS:                           &corev1.PodOS{Name: corev1.Windows},
		},
	}
	if podSpec != nil || podContents != nil {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
			GMSACredentialSpecName: podSpec, GMSACredentialSpec: podContents,
		}}
	}
	names := []string{"app"}
	if containerSpecs != nil {
		names = nil
		for n := range containerSpecs {
			names = append(names, n)
		}
	}
	for _, n := range names {
		c := corev1.Container{Name: n, Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}
		if s := containerSpecs[n]; s != nil {
			c.SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: s}}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// TestGMSAWebhook runs windows-gmsa's end-to-end cases against each real
// kube-apiserver with ksa's webhook registered.
func TestGMSAWebhook(t *testing.T) {
	shared.Each(t, testGMSAWebhook)
}

func testGMSAWebhook(t *testing.T, cp *controlplane.ControlPlane) {
	g := setupGMSA(t, cp)
	pods := g.cp.Clientset().CoreV1().Pods(g.ns)
	tests := []struct {
		name        string
		pod         *corev1.Pod
		wantCode    int32
		wantMessage string
		check       func(t *testing.T, pod *corev1.Pod)
	}{
		{
			name: "case 33: pod-level name, service account allowed: contents filled in",
			pod:  gmsaPod("pod-level", "granted", strPtr("credspec-0"), nil, nil),
			check: func(t *testing.T, pod *corev1.Pod) {
				require.NotNil(t, pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec)
				assert.Equal(t, g.contents["credspec-0"], *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec)
			},
		},
		{
			name: "case 35: pod and container levels, credspec-1 stored as v1alpha1",
			pod:  gmsaPod("mixed", "granted", strPtr("credspec-1"), map[string]*string{"nginx0": strPtr("credspec-0"), "nginx1": nil}, nil),
			check: func(t *testing.T, pod *corev1.Pod) {
				assert.Equal(t, g.contents["credspec-1"], *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec)
				for _, c := range pod.Spec.Containers {
					if c.Name == "nginx0" {
						assert.Equal(t, g.contents["credspec-0"], *c.SecurityContext.WindowsOptions.GMSACredentialSpec)
					}
				}
			},
		},
		{
			name: "case 43: HostAccountConfig contents",
			pod:  gmsaPod("host-account", "granted", strPtr("credspec-hostaccountconfig"), nil, nil),
			check: func(t *testing.T, pod *corev1.Pod) {
				assert.Contains(t, *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec, `\u003cpassword\u003e`)
			},
		},
		{
			name: "case 37: service account without the RoleBinding", pod: gmsaPod("denied", "denied", strPtr("credspec-0"), nil, nil),
			wantCode: 403, wantMessage: "service account \"denied\" is not authorized to `use` GMSA cred spec \"credspec-0\"",
		},
		{
			name: "case 38: missing credential spec", pod: gmsaPod("missing", "granted", strPtr("i-sure-dont-exist"), nil, nil),
			wantCode: 404, wantMessage: "cred spec i-sure-dont-exist does not exist",
		},
		{
			name: "case 39: contents without a name", pod: gmsaPod("no-name", "granted", nil, nil, strPtr(`{"CmsPlugins":["ActiveDirectory"]}`)),
			wantCode: 422, wantMessage: "has a GMSA cred spec set, but does not define the name of the corresponding resource",
		},
		{
			name: "case 41: contents of another spec", pod: gmsaPod("mismatch", "granted", strPtr("credspec-0"), nil, strPtr(`{"CmsPlugins":["ActiveDirectory"]}`)),
			wantCode: 422, wantMessage: "does not match the contents of GMSA resource \"credspec-0\"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			created, err := pods.Create(t.Context(), tt.pod, metav1.CreateOptions{})
			if tt.wantMessage == "" {
				require.NoError(t, err)
				tt.check(t, created)
				return
			}
			require.Error(t, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			assert.Equal(t, tt.wantCode, status.Status().Code, status.Status().Message)
			assert.Contains(t, status.Status().Message, tt.wantMessage)
		})
	}

	// Case 42: an update changing the GMSA name is refused (kube-apiserver's
	// own pod validation refuses it before the webhook's Update check, which
	// the unit conformance cases cover); case 44: an update changing only
	// the image is admitted by both.
	pod, err := pods.Get(t.Context(), "pod-level", metav1.GetOptions{})
	require.NoError(t, err)
	renamed := pod.DeepCopy()
	renamed.Spec.SecurityContext.WindowsOptions.GMSACredentialSpecName = strPtr("credspec-1")
	_, err = pods.Update(t.Context(), renamed, metav1.UpdateOptions{})
	require.Error(t, err, "changing the GMSA name is refused")
	assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%v", err)

	// Ephemeral containers (kubectl debug), which windows-gmsa does not
	// cover: one naming a spec the pod's service account may not use is
	// refused; one naming a spec it may use gets the contents.
	plain, err := pods.Create(t.Context(), gmsaPod("plain", "denied", nil, nil, nil), metav1.CreateOptions{})
	require.NoError(t, err)
	debug := plain.DeepCopy()
	debug.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022",
		SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: strPtr("credspec-0")}},
	}}}
	_, err = pods.UpdateEphemeralContainers(t.Context(), "plain", debug, metav1.UpdateOptions{})
	require.Error(t, err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.Equal(t, int32(403), status.Status().Code, status.Status().Message)

	allowed, err := pods.Get(t.Context(), "pod-level", metav1.GetOptions{})
	require.NoError(t, err)
	allowed.Spec.EphemeralContainers = debug.Spec.EphemeralContainers
	updated, err := pods.UpdateEphemeralContainers(t.Context(), "pod-level", allowed, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Len(t, updated.Spec.EphemeralContainers, 1)
	ec := updated.Spec.EphemeralContainers[0].SecurityContext.WindowsOptions
	require.NotNil(t, ec.GMSACredentialSpec, "the mutating webhook filled in the ephemeral container")
	assert.Equal(t, g.contents["credspec-0"], *ec.GMSACredentialSpec)

	pod, err = pods.Get(t.Context(), "pod-level", metav1.GetOptions{})
	require.NoError(t, err)
	reimaged := pod.DeepCopy()
	reimaged.Spec.Containers[0].Image = strings.Replace(reimaged.Spec.Containers[0].Image, "ltsc2022", "ltsc2025", 1)
	_, err = pods.Update(t.Context(), reimaged, metav1.UpdateOptions{})
	require.NoError(t, err)
}
