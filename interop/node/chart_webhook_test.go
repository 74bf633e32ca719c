package node_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/deploy"
	"github.com/ksa-go/ksa/interop/node"
)

// TestChartGMSAWebhook installs the chart's GMSA admission webhook (`ksa
// webhook serve`, webhook.enabled, its serving certificate from a
// kubernetes.io/tls Secret and webhook.tls.caBundle, cert-manager being
// absent) with one credential spec, webhook01, allowed to the service
// account "allowed" only. Through kube-apiserver, a pod of "allowed"
// naming webhook01 is admitted with the credential spec inlined; a pod of
// "refused" naming it is rejected by the webhook. The admitted pod is not
// run: it is a Windows pod's spec, and the node is Linux.
//
// kube-apiserver must reach the webhook: with no kube-proxy, the
// Service's cluster IP leads nowhere, so the webhook configurations the
// chart renders are applied with clientConfig.url
// https://127.0.0.1:PORT/mutate (and /validate) in place of the Service,
// the webhook's pod running on the host's network on PORT, its serving
// certificate naming the Service's DNS name, as NOTES.txt says, and
// 127.0.0.1. The chart's two replicas are one here: the test makes the
// pod from the Deployment's template (no kube-controller-manager runs).
// The configurations are deleted before the webhook's pod, so that no
// later pod creation meets a webhook that is gone.
func TestChartGMSAWebhook(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)
	workloads := n.Namespace(t)
	cs := n.ControlPlane().Clientset()
	ctx := t.Context()
	res := importKsaImage(t, n)

	// The serving certificate's CA and the certificate, as a Secret.
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa node webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	const credSpec = "webapp01"
	allowed := "system:serviceaccount:" + workloads + ":allowed"
	manifest, err := deploy.Render(filepath.Join(repoRoot, deploy.ChartDir), deploy.Release, ns, map[string]any{
		"image":   imageValues(t, res.Image.Name),
		"podcert": map[string]any{"enabled": false},
		"webhook": map[string]any{
			"enabled": true,
			"credSpecs": []any{map[string]any{
				"apiVersion": "windows.k8s.io/v1", "kind": "GMSACredentialSpec",
				"metadata": map[string]any{"name": credSpec},
				"credspec": map[string]any{
					"CmsPlugins": []any{"ActiveDirectory"},
					"DomainJoinConfig": map[string]any{
						"DnsName": "contoso.com", "DnsTreeName": "contoso.com",
						"Guid": "244818ae-87ca-4fcd-92ec-e79e5252348a", "MachineAccountName": "WebApp01",
						"NetBiosName": "CONTOSO", "Sid": "S-1-5-21-2126729477-2524075714-3094792973",
					},
					"ActiveDirectoryConfig": map[string]any{"GroupManagedServiceAccounts": []any{
						map[string]any{"Name": "WebApp01", "Scope": "contoso.com"},
					}},
				},
			}},
			"allow": map[string]any{allowed: []any{credSpec}},
			"tls": map[string]any{
				"certManager": map[string]any{"enabled": false},
				"caBundle":    base64.StdEncoding.EncodeToString(caPEM),
			},
		},
	})
	require.NoError(t, err)

	var dep *appsv1.Deployment
	var svc string
	var hooks []int
	objs := manifestObjects(t, manifest)
	for i, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks = append(hooks, i)
			continue
		case "Deployment":
			dep = &appsv1.Deployment{}
			require.NoError(t, runtimeFromUnstructured(o, dep))
		case "Service":
			svc = o.GetName()
		}
		applyObject(t, n, ns, o)
	}
	require.NotNil(t, dep, "the chart renders the webhook's Deployment")
	require.NotEmpty(t, svc, "the chart renders the webhook's Service")
	require.Len(t, hooks, 2, "the chart renders a mutating and a validating configuration")

	certPEM, keyPEM := servingCert(t, ca, caKey, svc+"."+ns+".svc")
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ksa-webhook-tls"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The webhook's pod, on the host's network on a port of its own.
	port := freeTCPPort(t)
	tmpl := dep.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Name = dep.Name + "-0"
	pod.Spec.HostNetwork = true
	require.Len(t, pod.Spec.Containers, 1)
	c := &pod.Spec.Containers[0]
	found := false
	for i, a := range c.Args {
		if strings.HasPrefix(a, "--addr=") {
			c.Args[i], found = "--addr=:"+strconv.Itoa(port), true
		}
	}
	require.True(t, found, "the webhook's container has --addr")
	require.Len(t, c.Ports, 1)
	c.Ports[0].ContainerPort = int32(port)
	running, err := n.RunPod(ctx, ns, pod)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, n.DeletePod(context.Background(), ns, running.Name)) })
	waitPodReady(t, n, ns, running.Name)

	// The configurations, calling the pod at its address.
	for _, i := range hooks {
		o := objs[i]
		webhooks, ok, err := unstructuredSlice(o.Object, "webhooks")
		require.NoError(t, err)
		require.True(t, ok)
		for _, w := range webhooks {
			cc := w.(map[string]any)["clientConfig"].(map[string]any)
			svcRef := cc["service"].(map[string]any)
			assert.Equal(t, svc, svcRef["name"])
			cc["url"] = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + svcRef["path"].(string)
			delete(cc, "service")
		}
		applyObject(t, n, ns, o)
		kind, name := o.GetKind(), o.GetName()
		t.Cleanup(func() {
			adm := cs.AdmissionregistrationV1()
			var err error
			if kind == "MutatingWebhookConfiguration" {
				err = adm.MutatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
			} else {
				err = adm.ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
			}
			assert.NoError(t, err)
		})
	}

	gmsaPod := func(sa string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "gmsa-" + sa},
			Spec: corev1.PodSpec{
				ServiceAccountName: sa,
				SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
					GMSACredentialSpecName: new(credSpec),
				}},
				Containers: []corev1.Container{{Name: "app", Image: node.ProbeImage}},
			},
		}
	}
	for _, sa := range []string{"allowed", "refused"} {
		_, err := cs.CoreV1().ServiceAccounts(workloads).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// The configurations take effect once kube-apiserver has read them:
	// until the allowed pod comes back with its credential spec inlined.
	var admitted *corev1.Pod
	poll(t, func() string {
		return "the allowed pod is not admitted with its credential spec: " + podSpecSummary(admitted)
	},
		func(ctx context.Context) bool {
			p, err := cs.CoreV1().Pods(workloads).Create(ctx, gmsaPod("allowed"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return false
			}
			admitted = p
			w := p.Spec.SecurityContext.WindowsOptions
			return w != nil && w.GMSACredentialSpec != nil
		})
	admitted, err = cs.CoreV1().Pods(workloads).Create(ctx, gmsaPod("allowed"), metav1.CreateOptions{})
	require.NoError(t, err, "a pod of an allowed service account is admitted")
	spec := admitted.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec
	require.NotNil(t, spec, "the webhook inlined the credential spec")
	assert.Contains(t, *spec, "WebApp01")

	_, err = cs.CoreV1().Pods(workloads).Create(ctx, gmsaPod("refused"), metav1.CreateOptions{})
	require.Error(t, err, "a pod of a service account not allowed the credential spec is rejected")
	assert.Contains(t, err.Error(), "gmsa.ksa-go.github.io")
	t.Logf("refused: %v", err)
}

// servingCert issues a serving certificate for dnsName and 127.0.0.1 from
// ca, as PEM.
func servingCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, dnsName string) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{dnsName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// unstructuredSlice returns obj[field] as a slice.
func unstructuredSlice(obj map[string]any, field string) ([]any, bool, error) {
	v, ok := obj[field]
	if !ok {
		return nil, false, nil
	}
	s, ok := v.([]any)
	if !ok {
		return nil, false, nil
	}
	return s, true, nil
}

// podSpecSummary is p's security context, for a failure message.
func podSpecSummary(p *corev1.Pod) string {
	if p == nil || p.Spec.SecurityContext == nil {
		return "no pod"
	}
	return p.Spec.SecurityContext.String()
}
