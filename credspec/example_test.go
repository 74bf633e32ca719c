package credspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ksa-go/ksa/credspec"
)

func ExampleEqual() {
	stored := `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com"}}`
	for _, inlined := range []string{
		"{\n  \"DomainJoinConfig\": {\"DnsName\": \"contoso.com\"},\n  \"CmsPlugins\": [\"ActiveDirectory\"]\n}",
		`{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"CONTOSO.COM"}}`,
		`not JSON`,
	} {
		eq, err := credspec.Equal(inlined, stored)
		fmt.Println(eq, errors.Is(err, credspec.ErrInvalidSpec))
	}
	// Output:
	// true false
	// false false
	// false true
}

func ExampleCanonical() {
	c, err := credspec.Canonical(`{ "b": ["x", "y"], "a": {"PluginInput": "<secret>"} }`)
	if err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output: {"a":{"PluginInput":"\u003csecret\u003e"},"b":["x","y"]}
}

func ExampleEffectiveSpecs() {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
			GMSACredentialSpecName: new("webapp"), GMSACredentialSpec: new(`{"pod":1}`),
		}},
		InitContainers: []corev1.Container{{Name: "setup"}},
		Containers: []corev1.Container{
			{Name: "app", SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: new("ContainerUser")}}},
			{Name: "sidecar", SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("other")}}},
		},
	}}
	for _, e := range credspec.EffectiveSpecs(pod) {
		fmt.Printf("%s from %s: %q\n", e.Container, e.From, e.CredentialSpec())
	}
	// Output:
	// container "app" from pod: "{\"pod\":1}"
	// container "sidecar" from container: ""
	// init container "setup" from pod: "{\"pod\":1}"
}

func ExampleExpander_ExpandCreate() {
	src, err := credspec.NewStaticSource(credspec.NewGMSACredentialSpec("webapp01", &credspec.CredentialSpec{
		CMSPlugins:       []string{"ActiveDirectory"},
		DomainJoinConfig: &credspec.DomainJoinConfig{DNSName: "contoso.com", MachineAccountName: "WebApp01"},
	}))
	if err != nil {
		panic(err)
	}
	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src})
	if err != nil {
		panic(err)
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:            "app",
		SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}},
	}}}}
	patch, err := exp.ExpandCreate(context.Background(), pod)
	if err != nil {
		panic(err)
	}
	out, _ := json.MarshalIndent(patch, "", "  ")
	fmt.Println(string(out))
	// Output:
	// [
	//   {
	//     "op": "add",
	//     "path": "/spec/containers/0/securityContext/windowsOptions/gmsaCredentialSpec",
	//     "value": "{\"CmsPlugins\":[\"ActiveDirectory\"],\"DomainJoinConfig\":{\"DnsName\":\"contoso.com\",\"MachineAccountName\":\"WebApp01\"}}"
	//   }
	// ]
}

func ExampleValidator_ValidateCreate() {
	src, err := credspec.NewStaticSourceJSON(map[string]string{"webapp01": `{"CmsPlugins":["ActiveDirectory"]}`})
	if err != nil {
		panic(err)
	}
	// An authorizer granting `use` of webapp01 to the service account
	// web/frontend only.
	authz := credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
		ok := r.User.Username == "system:serviceaccount:web:frontend" && r.Name == "webapp01"
		return credspec.Decision{Allowed: ok}, nil
	})
	v, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz})
	if err != nil {
		panic(err)
	}
	for _, sa := range []string{"frontend", "batch"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "web"},
			Spec: corev1.PodSpec{ServiceAccountName: sa, SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				GMSACredentialSpecName: new("webapp01"), GMSACredentialSpec: new(`{"CmsPlugins": ["ActiveDirectory"]}`),
			}}},
		}
		err := v.ValidateCreate(context.Background(), "web", pod, nil)
		var d *credspec.Denial
		if errors.As(err, &d) {
			fmt.Println(d.Code, d.Message)
			continue
		}
		fmt.Println("allowed", sa)
	}
	// Output:
	// allowed frontend
	// 403 service account "batch" is not authorized to `use` GMSA cred spec "webapp01"
}

func ExampleNewHandler() {
	src, err := credspec.NewStaticSourceJSON(map[string]string{"webapp01": `{"CmsPlugins":["ActiveDirectory"]}`})
	if err != nil {
		panic(err)
	}
	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src})
	if err != nil {
		panic(err)
	}
	h, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	pod, _ := json.Marshal(&corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
		WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")},
	}}})
	body, _ := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "uid-1",
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Namespace: "web",
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: pod},
		},
	})
	resp, err := http.Post(srv.URL+credspec.MutatePath, "application/json", bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, review.Response.UID, review.Response.Allowed, *review.Response.PatchType)
	fmt.Println(string(review.Response.Patch))
	// Output:
	// 200 uid-1 true JSONPatch
	// [{"op":"add","path":"/spec/securityContext/windowsOptions/gmsaCredentialSpec","value":"{\"CmsPlugins\":[\"ActiveDirectory\"]}"}]
}

func ExampleResourceYAML() {
	credSpecJSON := []byte(`{
  "CmsPlugins": ["ActiveDirectory"],
  "DomainJoinConfig": {"DnsName": "contoso.com", "DnsTreeName": "contoso.com",
    "Guid": "244818ae-87ca-4fcd-92ec-e79e5252348a", "MachineAccountName": "WebApp01",
    "NetBiosName": "CONTOSO", "Sid": "S-1-5-21-2126729477-2524075714-3094792973"},
  "ActiveDirectoryConfig": {"GroupManagedServiceAccounts": [{"Name": "WebApp01", "Scope": "contoso.com"}]}
}`)
	manifest, err := credspec.ResourceYAML("", credSpecJSON)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(manifest)
	// Output:
	// apiVersion: windows.k8s.io/v1
	// kind: GMSACredentialSpec
	// metadata:
	//   name: webapp01
	// credspec:
	//   ActiveDirectoryConfig:
	//     GroupManagedServiceAccounts:
	//     - Name: WebApp01
	//       Scope: contoso.com
	//   CmsPlugins:
	//   - ActiveDirectory
	//   DomainJoinConfig:
	//     DnsName: contoso.com
	//     DnsTreeName: contoso.com
	//     Guid: 244818ae-87ca-4fcd-92ec-e79e5252348a
	//     MachineAccountName: WebApp01
	//     NetBiosName: CONTOSO
	//     Sid: S-1-5-21-2126729477-2524075714-3094792973
}

func ExampleCheckWindowsOptions() {
	errs := credspec.CheckWindowsOptions(&corev1.WindowsSecurityContextOptions{
		GMSACredentialSpecName: new("WebApp01"),
		GMSACredentialSpec:     new(""),
	}, field.NewPath("spec", "securityContext", "windowsOptions"))
	for _, e := range errs {
		fmt.Println(e.Field, "-", e.Detail)
	}
	// Output:
	// spec.securityContext.windowsOptions.gmsaCredentialSpecName - a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
	// spec.securityContext.windowsOptions.gmsaCredentialSpec - gmsaCredentialSpec cannot be an empty string
}

func ExampleNewCredentialSpec() {
	spec, err := credspec.NewCredentialSpec(credspec.CredentialSpecConfig{Account: "WebApp01", DNSName: "contoso.com", NetBIOSName: "CONTOSO",
		GUID: "244818ae-87ca-4fcd-92ec-e79e5252348a", SID: "S-1-5-21-2126729477-2524075714-3094792973"})
	if err != nil {
		fmt.Println(err)
		return
	}
	manifest, err := credspec.NewGMSACredentialSpec(spec.DefaultName(), spec).Manifest()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(manifest))
	// Output:
	// apiVersion: windows.k8s.io/v1
	// kind: GMSACredentialSpec
	// metadata:
	//   name: webapp01
	// credspec:
	//   ActiveDirectoryConfig:
	//     GroupManagedServiceAccounts:
	//     - Name: WebApp01
	//       Scope: contoso.com
	//     - Name: WebApp01
	//       Scope: CONTOSO
	//   CmsPlugins:
	//   - ActiveDirectory
	//   DomainJoinConfig:
	//     DnsName: contoso.com
	//     DnsTreeName: contoso.com
	//     Guid: 244818ae-87ca-4fcd-92ec-e79e5252348a
	//     MachineAccountName: WebApp01
	//     NetBiosName: CONTOSO
	//     Sid: S-1-5-21-2126729477-2524075714-3094792973
}
