package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/deploy"
)

// warnings collects the warnings kube-apiserver answers with.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns the warnings collected since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// planeConfig is the control plane of version with pod certificates and
// their projections served: on by default in 1.37, behind feature gates
// (and certificates.k8s.io/v1beta1) in 1.36.
func planeConfig(version string) controlplane.Config {
	cfg := controlplane.Config{Version: version}
	if strings.HasPrefix(version, "v1.36.") {
		cfg.FeatureGates = map[string]bool{"PodCertificateRequest": true, "ClusterTrustBundle": true, "ClusterTrustBundleProjection": true}
		cfg.RuntimeConfig = map[string]string{"certificates.k8s.io/v1beta1": "true"}
	}
	return cfg
}

// TestApplyRestricted applies the chart, rendered with each set of values,
// server-side into a namespace held to the restricted Pod Security level,
// on kube-apiserver 1.37 and 1.36: every object is accepted with no
// warning, and a pod made from each Deployment's template is admitted
// (a dry run, which runs the enforcing admission) with no warning. The
// SPIFFE snippet's pod is admitted the same way, and the signer's static
// pod, as its mirror pod, in kube-system. Custom resources (cert-manager's,
// the ServiceMonitor) are left out: their CRDs are not installed.
func TestApplyRestricted(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		cp := controlplane.StartForTest(t, planeConfig(version))
		ctx := t.Context()
		warn := &warnings{}
		cfg := rest.CopyConfig(cp.RESTConfig())
		cfg.WarningHandlerWithContext = warn
		cs, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		dyn, err := dynamic.NewForConfig(cfg)
		require.NoError(t, err)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))

		ns := cp.Namespace(t)
		nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		require.NoError(t, err)
		if nsObj.Labels == nil {
			nsObj.Labels = map[string]string{}
		}
		for _, mode := range []string{"enforce", "warn", "audit"} {
			nsObj.Labels["pod-security.kubernetes.io/"+mode] = "restricted"
		}
		_, err = cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
		require.NoError(t, err)

		// A pod of the snippet, in the restricted namespace.
		b, err := os.ReadFile(filepath.Join(root, "deploy", "snippets", "spiffe-sidecar.yaml"))
		require.NoError(t, err)
		var snippet corev1.Pod
		require.NoError(t, yaml.UnmarshalStrict(b, &snippet))
		dryRunPod(t, cs, warn, ns, &snippet)

		// The signer's static pod as the kubelet mirrors it: in
		// kube-system, which is not held to a level (a static pod runs as
		// root on the host network).
		b, err = os.ReadFile(filepath.Join(root, "deploy", "signer", "ksa-signer.yaml"))
		require.NoError(t, err)
		var static corev1.Pod
		require.NoError(t, yaml.UnmarshalStrict(b, &static))
		// The kubelet marks a mirror pod so (the value is a hash of the
		// file) and binds it to its node; ServiceAccount admission then
		// leaves it without an account.
		static.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "0"}
		static.Spec.NodeName = "control-plane-1"
		dryRunPod(t, cs, warn, static.Namespace, &static)

		sets := valueSets()
		for i, set := range sets {
			t.Run(set.name, func(t *testing.T) {
				manifest, err := deploy.Render(chartDir, fmt.Sprintf("ksa%d", i), ns, set.values)
				require.NoError(t, err)
				docs, err := deploy.Documents([]byte(manifest))
				require.NoError(t, err)
				applied := 0
				for _, doc := range docs {
					obj := &unstructured.Unstructured{}
					require.NoError(t, yaml.Unmarshal(doc, &obj.Object))
					gvk := obj.GroupVersionKind()
					mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
					if meta.IsNoMatchError(err) {
						t.Logf("%s %s: no CRD installed, not applied", gvk.Kind, obj.GetName())
						continue
					}
					require.NoError(t, err)
					var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
					if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
						ri = dyn.Resource(mapping.Resource).Namespace(ns)
					}
					data, err := obj.MarshalJSON()
					require.NoError(t, err)
					force := true
					_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "ksa-deploy-test", Force: &force})
					require.NoError(t, err, "%s %s", gvk.Kind, obj.GetName())
					assert.Empty(t, warn.take(), "%s %s", gvk.Kind, obj.GetName())
					applied++

					if gvk.Kind == "Deployment" {
						var d appsv1.Deployment
						require.NoError(t, runtimeFromUnstructured(obj, &d))
						pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-0", Labels: d.Spec.Template.Labels,
							Annotations: d.Spec.Template.Annotations}, Spec: d.Spec.Template.Spec}
						dryRunPod(t, cs, warn, ns, pod)
					}
				}
				assert.Positive(t, applied)
			})
		}

		// The check can fail: with privilege escalation allowed, the
		// Deployment is stored with a warning and its pod refused.
		manifest, err := deploy.Render(chartDir, "ksa-unrestricted", ns, map[string]any{"securityContext": map[string]any{"allowPrivilegeEscalation": true}})
		require.NoError(t, err)
		docs, err := deploy.Documents([]byte(manifest))
		require.NoError(t, err)
		refused := 0
		for _, doc := range docs {
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
				continue
			}
			refused++
			d.Namespace = ns
			_, err = cs.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			require.NoError(t, err)
			assert.Contains(t, strings.Join(warn.take(), "\n"), "violate PodSecurity \"restricted:latest\"")
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-0", Namespace: ns}, Spec: d.Spec.Template.Spec}
			_, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "allowPrivilegeEscalation != false")
		}
		assert.Equal(t, 1, refused, "the signer's Deployment")
	})
}

// dryRunPod creates pod in ns with a dry run, which runs every admission
// (Pod Security's enforcing mode among them) without storing it, and
// checks that it is admitted with no warning.
func dryRunPod(t *testing.T, cs kubernetes.Interface, warn *warnings, ns string, pod *corev1.Pod) {
	t.Helper()
	pod = pod.DeepCopy()
	pod.Namespace = ns
	_, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err, "pod %s/%s", ns, pod.Name)
	assert.Empty(t, warn.take(), "pod %s/%s", ns, pod.Name)
}

// runtimeFromUnstructured converts obj into out strictly.
func runtimeFromUnstructured(obj *unstructured.Unstructured, out any) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(data, out)
}
