package credspec_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

// benchPod names credspec-0 at pod level and credspec-0, credspec-1 and
// credspec-2 on three of its four containers, like windows-gmsa's
// several-containers integration test.
func benchPod() *corev1.Pod {
	c := func(name string, opts *corev1.WindowsSecurityContextOptions) corev1.Container {
		return corev1.Container{Name: name, Image: "nginx", SecurityContext: &corev1.SecurityContext{WindowsOptions: opts}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			ServiceAccountName: "sa",
			SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: named("credspec-1")},
			Containers: []corev1.Container{
				c("nginx0", named("credspec-0")), c("nginx1", nil), c("nginx2", named("credspec-2")), c("nginx3", named("credspec-0")),
			},
		},
	}
}

type benchEnv struct {
	exp    *credspec.Expander
	val    *credspec.Validator
	pod    *corev1.Pod
	stored *corev1.Pod
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	c := newCluster(b, false)
	authz := credspec.AuthorizerFunc(func(context.Context, credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: true}, nil
	})
	env := &benchEnv{exp: c.exp, pod: benchPod()}
	env.val = newValidator(b, c.source, authz)
	patch, err := env.exp.ExpandCreate(b.Context(), env.pod)
	require.NoError(b, err)
	require.Len(b, patch, 4)
	env.stored = applyPatch(b, env.pod, patch)
	return env
}

// BenchmarkExpandCreate: the mutating webhook's work per pod, in-memory
// lookups.
func BenchmarkExpandCreate(b *testing.B) {
	env := newBenchEnv(b)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.exp.ExpandCreate(ctx, env.pod); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateCreate: the validating webhook's work per pod (access
// checks and contents comparisons), in-memory lookups and authorizer.
func BenchmarkValidateCreate(b *testing.B) {
	env := newBenchEnv(b)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := env.val.ValidateCreate(ctx, "default", env.stored, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandlerValidate: a whole /validate review in process: read,
// decode, validate, encode.
func BenchmarkHandlerValidate(b *testing.B) {
	env := newBenchEnv(b)
	h := newTestHandler(b, credspec.HandlerConfig{Expander: env.exp, Validator: env.val})
	body := reviewRequest(b, admissionv1.Create, "Pod", env.stored, nil)
	resp := serve(b, h, credspec.ValidatePath, body)
	require.True(b, resp.Allowed)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, credspec.ValidatePath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkEqual(b *testing.B) {
	reordered := `{"DomainJoinConfig":{"Sid":"S-1-5-21-2126729477-2524075714-3094792973","NetBiosName":"CONTOSO","MachineAccountName":"WebApplication0","Guid":"244818ae-87ca-4fcd-92ec-e79e5252348a","DnsTreeName":"contoso.com","DnsName":"contoso.com"},
	  "CmsPlugins": ["ActiveDirectory"],
	  "ActiveDirectoryConfig": {"GroupManagedServiceAccounts": [{"Scope":"CONTOSO","Name":"WebApplication0"},{"Scope":"contoso.com","Name":"WebApplication0"}]}}`
	cases := []struct {
		name, a, b string
		want       bool
	}{
		{name: "identical", a: expectedCredSpec0, b: expectedCredSpec0, want: true},
		{name: "reordered", a: reordered, b: expectedCredSpec0, want: true},
		{name: "different", a: expectedCredSpecWithHostAccountConfig, b: expectedCredSpec0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.a) + len(c.b)))
			b.ReportAllocs()
			for b.Loop() {
				eq, err := credspec.Equal(c.a, c.b)
				if err != nil || eq != c.want {
					b.Fatal(eq, err)
				}
			}
		})
	}
}

func BenchmarkCanonical(b *testing.B) {
	b.SetBytes(int64(len(dummyCredSpecContents)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := credspec.Canonical(dummyCredSpecContents); err != nil {
			b.Fatal(err)
		}
	}
}
