package credspec_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa"
	ksacredspec "github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/interop/credspec"
)

func pod(sa string, opts *corev1.WindowsSecurityContextOptions) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa,
			SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: opts},
			Containers:         []corev1.Container{{Name: "c", Image: "i"}},
		},
	}
}

// TestAuthorizer runs the validator against client-go's fake clientset,
// whose reactor plays RBAC: frontend may use webapp01.
func TestAuthorizer(t *testing.T) {
	client := fake.NewClientset()
	var seen []*authorizationv1.LocalSubjectAccessReview
	client.PrependReactor("create", "localsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.LocalSubjectAccessReview)
		assert.Equal(t, "apps", a.GetNamespace())
		seen = append(seen, r)
		out := r.DeepCopy()
		attrs := r.Spec.ResourceAttributes
		if r.Spec.User == "system:serviceaccount:apps:frontend" && attrs.Verb == "use" && attrs.Group == "windows.k8s.io" &&
			attrs.Resource == "gmsacredentialspecs" && attrs.Name == "webapp01" {
			out.Status.Allowed = true
		} else {
			out.Status.Reason = "RBAC: no rule"
		}
		return true, out, nil
	})
	authz, err := credspec.NewAuthorizer(client)
	require.NoError(t, err)
	src, err := ksacredspec.NewStaticSourceJSON(map[string]string{"webapp01": `{"CmsPlugins":["ActiveDirectory"]}`})
	require.NoError(t, err)
	v, err := ksacredspec.NewValidator(ksacredspec.ValidatorConfig{Source: src, Authorizer: authz})
	require.NoError(t, err)

	opts := &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}
	require.NoError(t, v.ValidateCreate(t.Context(), "apps", pod("frontend", opts), nil))
	err = v.ValidateCreate(t.Context(), "apps", pod("batch", opts), nil)
	var d *ksacredspec.Denial
	require.ErrorAs(t, err, &d)
	assert.Equal(t, int32(http.StatusForbidden), d.Code)
	assert.Equal(t, "service account \"batch\" is not authorized to `use` GMSA cred spec \"webapp01\", reason: \"RBAC: no rule\"", d.Message)
	require.Len(t, seen, 2)
	assert.Equal(t, []string{"system:serviceaccounts", "system:serviceaccounts:apps"}, seen[0].Spec.Groups)

	// An API error is a denial naming it, not an allowance.
	client.PrependReactor("create", "localsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd down")
	})
	err = v.ValidateCreate(t.Context(), "apps", pod("frontend", opts), nil)
	require.ErrorAs(t, err, &d)
	assert.Equal(t, int32(http.StatusForbidden), d.Code)
	assert.Contains(t, d.Message, "error when checking authz access: etcd down")
	assert.True(t, apierrors.IsServiceUnavailable(d.Err))

	_, err = credspec.NewAuthorizer(nil)
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
}

func credSpecObject(name string, credspec any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "windows.k8s.io/v1",
		"kind":       "GMSACredentialSpec",
		"metadata":   map[string]any{"name": name},
	}}
	if credspec != nil {
		u.Object["credspec"] = credspec
	}
	return u
}

// TestSource runs the expander against client-go's fake dynamic client.
func TestSource(t *testing.T) {
	scheme := runtime.NewScheme()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{ksacredspec.GroupVersionResource(): "GMSACredentialSpecList"},
		credSpecObject("webapp01", map[string]any{
			"DomainJoinConfig": map[string]any{"NetBiosName": "CONTOSO", "DnsName": "contoso.com"},
			"CmsPlugins":       []any{"ActiveDirectory"},
			"ActiveDirectoryConfig": map[string]any{"HostAccountConfig": map[string]any{
				"PluginInput": "contoso.com:gmsaccg:<password>",
			}},
		}),
		credSpecObject("empty", nil),
	)
	src, err := credspec.NewSource(client)
	require.NoError(t, err)
	got, err := src.Contents(t.Context(), "webapp01")
	require.NoError(t, err)
	assert.Equal(t, `{"ActiveDirectoryConfig":{"HostAccountConfig":{"PluginInput":"contoso.com:gmsaccg:\u003cpassword\u003e"}},"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","NetBiosName":"CONTOSO"}}`, got)

	exp, err := ksacredspec.NewExpander(ksacredspec.ExpanderConfig{Source: src})
	require.NoError(t, err)
	patch, err := exp.ExpandCreate(t.Context(), pod("sa", &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}))
	require.NoError(t, err)
	require.Len(t, patch, 1)
	assert.Equal(t, got, patch[0].Value)

	for name, want := range map[string]int32{"missing": http.StatusNotFound, "empty": http.StatusExpectationFailed} {
		_, err := exp.ExpandCreate(t.Context(), pod("sa", &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new(name)}))
		var d *ksacredspec.Denial
		require.ErrorAs(t, err, &d, name)
		assert.Equal(t, want, d.Code, name)
	}

	_, err = credspec.NewSource(nil)
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
