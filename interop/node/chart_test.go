package node_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/deploy"
	"github.com/ksa-go/ksa/interop/node"
	"github.com/ksa-go/ksa/interop/node/image"
	"github.com/ksa-go/ksa/podcert"
)

// chartSigner is the signer name the chart is installed with.
const chartSigner = "ksa.test/chart-pods"

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// TestChartPodcert installs the chart's pod-certificate signer (`ksa
// podcert serve`, two replicas, leader election on) on the node and
// proves it serves the kubelet:
//
//   - the chart, rendered by interop/deploy with the ksa image of this
//     checkout (pull policy Never), is applied server-side, and the CA
//     Secret created as NOTES.txt says (a kubernetes.io/tls Secret);
//   - both replicas run and are Ready;
//   - a workload pod with a podCertificate projection naming the chart's
//     signer starts with a certificate the replicas issued for the
//     kubelet's own PodCertificateRequest, chaining to the Secret's CA;
//   - a pod asking, through userAnnotations, for a serving host the
//     chart's policy does not admit (podcert.allowHosts is empty) is
//     Denied (InvalidUnverifiedUserAnnotations) and never starts;
//   - two pods of deploy/snippets/spiffe-sidecar.yaml (`ksa spiffe serve`
//     as a native sidecar) do mutual TLS with go-spiffe (cmd/spiffe-mtls),
//     each authorizing the other's SPIFFE ID: every handshake succeeds,
//     through a CA rotation: the chart runs with --next-ca-* (extraArgs,
//     the next CA from a second Secret), the server's pod starts before
//     the next CA signs, the client's after, its certificate from the next
//     CA (the log says which CA signed the server's: on a machine slow
//     enough it was the next one too);
//   - the holder of the Lease deleted, the other replica takes the Lease
//     and keeps issuing (a new workload pod gets its certificate, from
//     the next CA), and the ClusterTrustBundle holds both CAs, which every
//     issued certificate chains to, at each step.
//
// No kube-controller-manager runs: the Deployment is applied, and its
// two replicas are made from its pod template by the test, bound to the
// node. A pod's network namespace holds only loopback and no kube-proxy
// runs, so the replicas run on the host's network, reaching kube-apiserver
// at 127.0.0.1 (KUBERNETES_SERVICE_HOST and _PORT set in the container),
// each with an ops port of its own and --leader-elect-identity its pod's
// name (on the host's network the host name is the node's).
func TestChartPodcert(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)
	cp := n.ControlPlane()
	cs := cp.Clientset()
	ctx := t.Context()

	res := importKsaImage(t, n)
	app := mtlsImage(t, n)
	// The CA rotates mid-test: the next CA, published from the start,
	// signs from signsAt on.
	signsAt := time.Now().Add(rotationAfter).UTC().Truncate(time.Second)
	manifest, err := deploy.Render(filepath.Join(repoRoot, deploy.ChartDir), deploy.Release, ns, map[string]any{
		"image": imageValues(t, res.Image.Name),
		"podcert": map[string]any{
			"signerName": chartSigner,
			"extraArgs": []any{
				"--next-ca-key=/etc/ksa/next-ca/tls.key", "--next-ca-cert=/etc/ksa/next-ca/tls.crt",
				"--next-ca-signs-at=" + signsAt.Format(time.RFC3339), "--ca-propagation=" + rotationPropagation.String(),
			},
			"extraVolumes": []any{map[string]any{"name": "next-ca", "secret": map[string]any{
				"secretName": "ksa-podcert-next-ca", "defaultMode": 0o440}}},
			"extraVolumeMounts": []any{map[string]any{"name": "next-ca", "mountPath": "/etc/ksa/next-ca", "readOnly": true}},
		},
	})
	require.NoError(t, err)
	objs := applyManifest(t, n, ns, manifest)
	var dep *appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			dep = &appsv1.Deployment{}
			require.NoError(t, runtimeFromUnstructured(o, dep))
		}
	}
	require.NotNil(t, dep, "the chart renders the signer's Deployment")
	require.NotNil(t, dep.Spec.Replicas)
	require.EqualValues(t, 2, *dep.Spec.Replicas)

	// The CA Secret, as NOTES.txt says:
	// kubectl create secret tls ksa-podcert-ca --cert ca.crt --key ca.key.
	// The next CA's Secret is made the same way.
	cas := map[string]*x509.Certificate{}
	for _, name := range []string{"ksa-podcert-ca", "ksa-podcert-next-ca"} {
		ca, caPEM, keyPEM := newChartCA(t)
		_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: caPEM, corev1.TLSPrivateKeyKey: keyPEM},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		cas[name] = ca
	}
	ca, next := cas["ksa-podcert-ca"], cas["ksa-podcert-next-ca"]

	apiURL, err := url.Parse(cp.URL)
	require.NoError(t, err)
	replicas := map[string]bool{}
	for i := range int(*dep.Spec.Replicas) {
		pod := replicaPod(t, dep, i, apiURL)
		running, err := n.RunPod(ctx, ns, pod)
		require.NoError(t, err)
		waitPodReady(t, n, ns, running.Name)
		replicas[running.Name] = true
	}
	t.Cleanup(func() {
		// Before the node stops: the replicas stop cleanly, giving the
		// Lease up.
		for name := range replicas {
			assert.NoError(t, n.DeletePod(context.Background(), ns, name))
		}
	})

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	roots.AddCert(next)
	issued := func(name string) *x509.Certificate {
		t.Helper()
		running, err := n.RunPod(ctx, ns, podCertPod(name, nil))
		require.NoError(t, err)
		files, err := n.ProbeFiles(ctx, running)
		require.NoError(t, err)
		bundle := files["/var/run/ksa/credentialbundle.pem"]
		require.Empty(t, bundle.Error)
		_, chain := parseCredentialBundle(t, []byte(bundle.Data))
		require.NotEmpty(t, chain)
		_, err = chain[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		require.NoError(t, err, "the certificate chains to a Secret's CA")
		pcr := podCertificateRequest(t, n, ns, running.Name)
		require.NotEmpty(t, pcr.Status.CertificateChain, "the kubelet's PodCertificateRequest was issued")
		first, _ := pem.Decode([]byte(pcr.Status.CertificateChain))
		require.NotNil(t, first)
		assert.Equal(t, first.Bytes, chain[0].Raw, "the pod holds the certificate of its kubelet's request")
		return chain[0]
	}

	// A workload pod gets its certificate from the replicas.
	leaf := issued("workload")
	assert.Equal(t, "spiffe://cluster.local/ns/"+ns+"/sa/default", leaf.URIs[0].String())
	assertTrustBundleHolds(t, n, ca, next)
	t.Logf("the first workload's certificate: from %s", issuerName(leaf, cas))

	// A pod asking for a serving host the chart's policy does not admit.
	denied := podCertPod("refused", map[string]string{podcert.DefaultServeHostsKey: "evil.example.com"})
	denied.Spec.NodeName = n.Name
	denied.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	_, err = cs.CoreV1().Pods(ns).Create(ctx, denied, metav1.CreateOptions{})
	require.NoError(t, err)
	pcr := podCertificateRequest(t, n, ns, "refused")
	require.Len(t, pcr.Status.Conditions, 1)
	assert.Equal(t, certificatesv1.PodCertificateRequestConditionTypeDenied, pcr.Status.Conditions[0].Type)
	assert.Equal(t, certificatesv1.PodCertificateRequestConditionInvalidUserConfig, pcr.Status.Conditions[0].Reason)
	got, err := cs.CoreV1().Pods(ns).Get(ctx, "refused", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, got.Status.Phase, "a pod without its certificate does not start")
	for _, st := range got.Status.ContainerStatuses {
		assert.Nil(t, st.State.Running, "container %s", st.Name)
	}
	require.NoError(t, n.DeletePod(ctx, ns, "refused"))

	// Two workload pods with the SPIFFE sidecar do mutual TLS, across the
	// CA's rotation: the server started before the switch, the client
	// after it, its certificate from the next CA.
	id := "spiffe://cluster.local/ns/" + ns + "/sa/default"
	port := strconv.Itoa(freeTCPPort(t))
	server, err := n.RunPod(ctx, ns, sidecarPod(t, "mtls-server", res.Image.Name, app, "-serve", ":"+port, "-peer", id))
	require.NoError(t, err)
	serverCert := requestCert(t, podCertificateRequest(t, n, ns, server.Name))
	poll(t, func() string { return "the clock never reached " + signsAt.String() }, func(context.Context) bool {
		return time.Now().After(signsAt.Add(time.Second))
	})
	client, err := n.RunPodToCompletion(ctx, ns, sidecarPod(t, "mtls-client", res.Image.Name, app,
		"-dial", "127.0.0.1:"+port, "-peer", id, "-n", strconv.Itoa(mtlsConnections)))
	require.NoError(t, err)
	clientCert := requestCert(t, podCertificateRequest(t, n, ns, client.Name))
	require.NoError(t, clientCert.CheckSignatureFrom(next), "after the switch, the next CA signs")
	t.Logf("mutual TLS: the server's certificate from %s, the client's from %s", issuerName(serverCert, cas), issuerName(clientCert, cas))
	checkMTLS(t, n, server, client, id)
	require.NoError(t, n.DeletePod(ctx, ns, server.Name))
	assertTrustBundleHolds(t, n, ca, next)

	// The Lease holder goes; the other replica takes over.
	holder := leaseHolder(t, n, ns, "")
	require.True(t, replicas[holder], "the Lease is held by a replica, not %q", holder)
	require.NoError(t, n.DeletePod(ctx, ns, holder))
	delete(replicas, holder)
	successor := leaseHolder(t, n, ns, holder)
	assert.True(t, replicas[successor], "the other replica holds the Lease, not %q", successor)
	assert.NoError(t, issued("after-takeover").CheckSignatureFrom(next))
	assertTrustBundleHolds(t, n, ca, next)
}

// The CA's rotation in TestChartPodcert: the next CA signs rotationAfter
// the chart is rendered, published rotationPropagation before (at
// least): the replicas must have started by then.
const (
	rotationAfter       = 90 * time.Second
	rotationPropagation = 30 * time.Second
)

// mtlsConnections is how many connections the SPIFFE client makes.
const mtlsConnections = 20

// mtlsImage builds cmd/spiffe-mtls, a go-spiffe app, imports its image
// into n and returns the image's name.
func mtlsImage(t *testing.T, n *node.Node) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "spiffe-mtls")
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, "./cmd/spiffe-mtls")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	app, err := image.Binary("ksa.local/spiffe-mtls:node", bin)
	require.NoError(t, err)
	require.NoError(t, n.ImportImage(t.Context(), app))
	return app.Name
}

// checkMTLS checks what the pods of spiffe-mtls printed: the client made
// mtlsConnections connections, none failed, to the server with SPIFFE ID
// id, and the server saw every one, from id, with no failed handshake.
func checkMTLS(t *testing.T, n *node.Node, server, client *corev1.Pod, id string) {
	t.Helper()
	logs, err := n.Logs(client, "app")
	require.NoError(t, err)
	var res struct {
		OK, Failed int
		Peer       string
		Errors     []string
	}
	require.NoError(t, json.Unmarshal([]byte(logs), &res), "the client printed %q", logs)
	assert.Equal(t, mtlsConnections, res.OK, "errors: %v", res.Errors)
	assert.Zero(t, res.Failed)
	assert.Equal(t, id, res.Peer)
	logs, err = n.Logs(server, "app")
	require.NoError(t, err)
	assert.Equal(t, mtlsConnections, strings.Count(logs, `{"peer":"`+id+`"}`), "the server's log: %s", logs)
	assert.NotContains(t, logs, "failed")
}

// requestCert is the leaf certificate an issued PodCertificateRequest
// holds.
func requestCert(t *testing.T, pcr *certificatesv1.PodCertificateRequest) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(pcr.Status.CertificateChain))
	require.NotNil(t, b, "PodCertificateRequest %s is issued", pcr.Name)
	c, err := x509.ParseCertificate(b.Bytes)
	require.NoError(t, err)
	return c
}

// issuerName names the CA of cas (by Secret) that signed c.
func issuerName(c *x509.Certificate, cas map[string]*x509.Certificate) string {
	for name, ca := range cas {
		if c.CheckSignatureFrom(ca) == nil {
			return "the CA of Secret " + name
		}
	}
	return "no known CA"
}

// sidecarPod is the pod of deploy/snippets/spiffe-sidecar.yaml named
// name, for the chart's signer, with the sidecar's image ksaImage and the
// app's appImage run with args, on the host's network.
func sidecarPod(t *testing.T, name, ksaImage, appImage string, args ...string) *corev1.Pod {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "snippets", "spiffe-sidecar.yaml"))
	require.NoError(t, err)
	var pod corev1.Pod
	require.NoError(t, yaml.UnmarshalStrict(raw, &pod))
	pod.Name = name
	pod.Spec.HostNetwork = true
	pod.Spec.TerminationGracePeriodSeconds = new(int64(5))
	require.Len(t, pod.Spec.InitContainers, 1)
	side := &pod.Spec.InitContainers[0]
	side.Image = ksaImage
	found := false
	for i, a := range side.Args {
		if a == "--ops-addr" && i+1 < len(side.Args) {
			side.Args[i+1], found = "127.0.0.1:"+strconv.Itoa(freeTCPPort(t)), true
		}
	}
	require.True(t, found, "the sidecar has --ops-addr")
	require.Len(t, pod.Spec.Containers, 1)
	pod.Spec.Containers[0].Image = appImage
	pod.Spec.Containers[0].Args = args
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			switch {
			case s.PodCertificate != nil:
				s.PodCertificate.SignerName = chartSigner
			case s.ClusterTrustBundle != nil:
				s.ClusterTrustBundle.SignerName = new(chartSigner)
			}
		}
	}
	return &pod
}

// imageValues are the chart's image values for the image named ref,
// "REPOSITORY:TAG", with pull policy Never (the image is imported).
func imageValues(t *testing.T, ref string) map[string]any {
	t.Helper()
	i := strings.LastIndex(ref, ":")
	require.True(t, i > 0 && !strings.Contains(ref[i:], "/"), "image %s has a tag", ref)
	return map[string]any{"repository": ref[:i], "tag": ref[i+1:], "pullPolicy": "Never"}
}

// replicaPod is replica i of dep's pod template, as the node can run it
// (see TestChartPodcert): on the host's network, reaching kube-apiserver
// at api, with an ops port of its own and its name as its Lease identity.
func replicaPod(t *testing.T, dep *appsv1.Deployment, i int, api *url.URL) *corev1.Pod {
	t.Helper()
	tmpl := dep.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Name = dep.Name + "-" + strconv.Itoa(i)
	pod.Spec.HostNetwork = true
	require.Len(t, pod.Spec.Containers, 1)
	c := &pod.Spec.Containers[0]
	port := freeTCPPort(t)
	found := false
	for j, a := range c.Args {
		if strings.HasPrefix(a, "--ops-addr=") {
			c.Args[j], found = "--ops-addr=$(POD_IP):"+strconv.Itoa(port), true
		}
	}
	require.True(t, found, "the chart's container has --ops-addr")
	c.Args = append(c.Args, "--leader-elect-identity="+pod.Name)
	require.Len(t, c.Ports, 1)
	c.Ports[0].ContainerPort = int32(port)
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: api.Hostname()},
		corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: api.Port()})
	return pod
}

// podCertPod is a probe pod named name with a podCertificate projection
// of the chart's signer, asking with annotations.
func podCertPod(name string, annotations map[string]string) *corev1.Pod {
	pod := node.ProbePod(name, "/var/run/ksa/credentialbundle.pem")
	pod.Spec.Volumes = []corev1.Volume{{
		Name: "credential",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
				SignerName: chartSigner, KeyType: "ECDSAP256", CredentialBundlePath: "credentialbundle.pem",
				UserAnnotations: annotations,
			}}},
		}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "credential", MountPath: "/var/run/ksa", ReadOnly: true}}
	return pod
}

// newChartCA makes a CA: its certificate, and its certificate and key as
// PEM.
func newChartCA(t *testing.T) (*x509.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa node chart CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// applyManifest applies every object of manifest server-side, in
// namespace when it is namespaced, and returns them.
func applyManifest(t *testing.T, n *node.Node, namespace, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs := manifestObjects(t, manifest)
	for _, obj := range objs {
		applyObject(t, n, namespace, obj)
	}
	return objs
}

// manifestObjects decodes every object of manifest.
func manifestObjects(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := deploy.Documents([]byte(manifest))
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, doc := range docs {
		obj := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(doc, &obj.Object))
		objs = append(objs, obj)
	}
	return objs
}

// applyObject applies obj server-side, in namespace when it is
// namespaced.
func applyObject(t *testing.T, n *node.Node, namespace string, obj *unstructured.Unstructured) {
	t.Helper()
	cs := n.ControlPlane().Clientset()
	dyn, err := dynamic.NewForConfig(n.ControlPlane().RESTConfig())
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err, "%s", gvk)
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == "namespace" {
		obj.SetNamespace(namespace)
		ri = dyn.Resource(m.Resource).Namespace(namespace)
	}
	data, err := obj.MarshalJSON()
	require.NoError(t, err)
	_, err = ri.Patch(t.Context(), obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "ksa-node-test", Force: new(true)})
	require.NoError(t, err, "applying %s %s", gvk.Kind, obj.GetName())
}

// runtimeFromUnstructured converts u into out.
func runtimeFromUnstructured(u *unstructured.Unstructured, out any) error {
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, out)
}

// poll calls check every 200ms until it returns true or two minutes pass,
// then fails t with what.
func poll(t *testing.T, what func() string, check func(ctx context.Context) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !check(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what(), ctx.Err())
		case <-tick.C:
		}
	}
}

// waitPodReady waits until the pod's Ready condition is True.
func waitPodReady(t *testing.T, n *node.Node, namespace, name string) {
	t.Helper()
	var last *corev1.Pod
	poll(t, func() string { return "pod " + name + " not Ready: " + podStatus(last) }, func(ctx context.Context) bool {
		p, err := n.ControlPlane().Clientset().CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = p
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

// podStatus summarizes p for a failure message.
func podStatus(p *corev1.Pod) string {
	if p == nil {
		return "not found"
	}
	data, _ := yaml.Marshal(p.Status)
	return string(data)
}

// podCertificateRequest waits until the PodCertificateRequest of pod
// podName has a condition, and returns it.
func podCertificateRequest(t *testing.T, n *node.Node, namespace, podName string) *certificatesv1.PodCertificateRequest {
	t.Helper()
	var found *certificatesv1.PodCertificateRequest
	poll(t, func() string { return "no decided PodCertificateRequest for pod " + podName }, func(ctx context.Context) bool {
		list, err := n.ControlPlane().Clientset().CertificatesV1().PodCertificateRequests(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if p := &list.Items[i]; p.Spec.PodName == podName && len(p.Status.Conditions) > 0 {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// leaseHolder waits until the signer's Lease in namespace is held by
// someone other than not, and returns the holder.
func leaseHolder(t *testing.T, n *node.Node, namespace, not string) string {
	t.Helper()
	name := "ksa-podcert." + strings.ReplaceAll(chartSigner, "/", ".")
	var holder string
	poll(t, func() string { return "Lease " + name + " held by " + strconv.Quote(holder) }, func(ctx context.Context) bool {
		l, err := n.ControlPlane().Clientset().CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		holder = *l.Spec.HolderIdentity
		return holder != "" && holder != not
	})
	return holder
}

// assertTrustBundleHolds waits until a ClusterTrustBundle of the chart's
// signer holds every one of cas.
func assertTrustBundleHolds(t *testing.T, n *node.Node, cas ...*x509.Certificate) {
	t.Helper()
	poll(t, func() string { return "no ClusterTrustBundle of " + chartSigner + " holds every CA" }, func(ctx context.Context) bool {
		list, err := n.ControlPlane().Clientset().CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		held := map[string]bool{}
		for _, b := range list.Items {
			if b.Spec.SignerName != chartSigner {
				continue
			}
			rest := []byte(b.Spec.TrustBundle)
			for {
				var blk *pem.Block
				if blk, rest = pem.Decode(rest); blk == nil {
					break
				}
				held[string(blk.Bytes)] = true
			}
		}
		for _, ca := range cas {
			if !held[string(ca.Raw)] {
				return false
			}
		}
		return true
	})
}

// freeTCPPort returns a TCP port free now.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
