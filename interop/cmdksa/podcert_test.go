package cmdksa

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	ksaid "github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

const podSigner = "pods.ksa.example/identity"

// bulkRequests is how many requests the timing step sends through the
// signer.
const bulkRequests = 1000

// TestPodCertificateSigner runs "ksa podcert serve" against real
// kube-apiservers (1.37: certificates.k8s.io/v1, GA; 1.36: v1beta1 behind
// the feature gate) as a service account holding only the RBAC "ksa
// podcert rbac" prints. Requests are created as the pod's node creates them
// (node credentials, NodeRestriction on), and the proposal's stories are
// checked end to end: the certificate authenticates to kube-apiserver as
// the service account, two pods do mutual TLS through the mounted bundles
// and the published ClusterTrustBundle, a serving certificate carries the
// hosts asked for, refused hosts are Denied and a bad CSR Failed (statuses
// the apiserver accepts), and 1,000 requests are all issued; the signer's
// /metrics then counts every decision by outcome and reason, its oldest
// undecided request's age returns to 0 and /readyz answers 200.
func TestPodCertificateSigner(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		caCert, caKey := podCA(t)
		writePEM(t, filepath.Join(work, "ca.crt"), "CERTIFICATE", caCert.Raw)
		keyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
		require.NoError(t, err)
		writePEM(t, filepath.Join(work, "ca.key"), "PRIVATE KEY", keyDER)

		// The signer runs as a service account with the printed RBAC only.
		cp, pcrs, kubeconfig := podcertPlane(t, version, bin, work, caCert)
		stopSigner, signerOutput := startSigner(t, bin, work, "serve", "--signer-name", podSigner, "--ca-key", "ca.key", "--ca-cert", "ca.crt",
			"--kubeconfig", kubeconfig, "--allow-host", "{serviceaccount}.{namespace}.svc", "--workers", "8", "--kube-api-qps", "1000", "--kube-api-burst", "2000",
			"--ops-addr", "127.0.0.1:0")
		ops := opsAddr(t, signerOutput)

		// A node, and pods bound to it that mount pod certificates.
		node := newNode(t, cp)
		ns := cp.Namespace(t)
		cart := newPod(t, cp, ns, "cart", node)
		checkout := newPod(t, cp, ns, "checkout", node)

		// 1. Issued, and the apiserver accepted the status.
		cartKey := newKey(t)
		name := pcrs.create(t, node, cart, stubCSR(t, cartKey, ""), nil)
		st := pcrs.wait(t, ns, name)
		require.Equal(t, podcert.Issued, st.Outcome(), "%+v", st.Conditions)
		cartBundle := writeBundle(t, work, "cart", cartKey, st.CertificateChain)
		leaf := firstCert(t, st.CertificateChain)
		assert.Equal(t, leaf.NotBefore, st.NotBefore.UTC())
		assert.Equal(t, leaf.NotAfter, st.NotAfter.UTC())

		// 2. The certificate authenticates as the service account.
		dec, err := x509sa.DecodeCertificate(leaf)
		require.NoError(t, err)
		want := dec.UserInfo()
		got := whoAmICert(t, cp, st.CertificateChain, cartKey)
		assert.Equal(t, "system:serviceaccount:"+ns+":cart", got.Username)
		assert.Equal(t, want.UID, got.UID)
		assert.ElementsMatch(t, append(want.Groups, "system:authenticated"), got.Groups)
		assert.Equal(t, []string{x509sa.CredentialID(leaf)}, []string(got.Extra[ksaid.ExtraCredentialID]))

		// 3. A serving certificate with the hosts asked for; mutual TLS
		// between the two pods through their mounted bundles and the
		// published trust bundle.
		checkoutKey := newKey(t)
		host := "checkout." + ns + ".svc"
		name = pcrs.create(t, node, checkout, stubCSR(t, checkoutKey, ""), map[string]string{podcert.DefaultServeHostsKey: host})
		st = pcrs.wait(t, ns, name)
		require.Equal(t, podcert.Issued, st.Outcome(), "%+v", st.Conditions)
		assert.Equal(t, []string{host}, firstCert(t, st.CertificateChain).DNSNames)
		checkoutBundle := writeBundle(t, work, "checkout", checkoutKey, st.CertificateChain)
		trust := pcrs.trustBundle(t)
		assert.Equal(t, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw})), trust)
		clientSaw, serverSaw := mutualTLS(t, trust, cartBundle, checkoutBundle, host)
		assert.Equal(t, "system:serviceaccount:"+ns+":checkout", clientSaw.ServiceAccount.Username())
		assert.Equal(t, "checkout", clientSaw.Pod.Name)
		assert.Equal(t, "system:serviceaccount:"+ns+":cart", serverSaw.ServiceAccount.Username())
		assert.Equal(t, "cart", serverSaw.Pod.Name)

		// 4. Hosts the policy refuses (another service's name in the same
		// namespace): Denied. A CSR with a subject (the kubelet's is
		// empty): Failed. The apiserver accepts both.
		name = pcrs.create(t, node, checkout, stubCSR(t, newKey(t), ""), map[string]string{podcert.DefaultServeHostsKey: "cart." + ns + ".svc"})
		st = pcrs.wait(t, ns, name)
		require.Equal(t, podcert.Denied, st.Outcome(), "%+v", st.Conditions)
		assert.Equal(t, podcert.ReasonInvalidUnverifiedUserAnnotations, st.Conditions[0].Reason)
		assert.Empty(t, st.CertificateChain)
		name = pcrs.create(t, node, cart, stubCSR(t, newKey(t), "system:masters"), nil)
		st = pcrs.wait(t, ns, name)
		require.Equal(t, podcert.Failed, st.Outcome(), "%+v", st.Conditions)
		assert.Equal(t, podcert.ReasonInvalidRequest, st.Conditions[0].Reason)

		// 5. 1,000 requests, all issued.
		bulkNS := cp.Namespace(t)
		bulkPod := newPod(t, cp, bulkNS, "bulk", node)
		csrs := make([][]byte, bulkRequests)
		for i := range csrs {
			csrs[i] = stubCSR(t, newKey(t), "")
		}
		start := time.Now()
		var outcomes map[string]podcert.Outcome
		done := make(chan error, 1)
		go func() {
			var err error
			outcomes, err = pcrs.waitAll(t, bulkNS, bulkRequests)
			done <- err
		}()
		var wg sync.WaitGroup
		next := make(chan []byte)
		errs := make([]error, 16)
		for i := range errs {
			wg.Go(func() {
				for csr := range next {
					if _, err := pcrs.tryCreate(t, node, bulkPod, csr, nil); err != nil && errs[i] == nil {
						errs[i] = err
					}
				}
			})
		}
		for _, csr := range csrs {
			next <- csr
		}
		close(next)
		wg.Wait()
		require.NoError(t, errors.Join(errs...), "creating PodCertificateRequests as the node")
		created := time.Since(start)
		require.NoError(t, <-done)
		elapsed := time.Since(start)
		issued := 0
		for _, o := range outcomes {
			if o == podcert.Issued {
				issued++
			}
		}
		assert.Equal(t, bulkRequests, issued)
		t.Logf("%s: %d PodCertificateRequests created as the node in %v, all decided %v after the first (%.0f/s)",
			version, bulkRequests, created.Round(time.Millisecond), elapsed.Round(time.Millisecond), float64(bulkRequests)/elapsed.Seconds())

		// 6. The metrics count what was decided, by outcome and reason;
		// the oldest undecided request's age returns to 0 once the
		// signer's cache holds every status; it is ready.
		// A decision is counted once its status write has returned to the
		// signer, which may come just after the watch above saw it: the
		// counts are read once they have all arrived.
		var m map[string]float64
		decisions := func() float64 {
			return m[`ksa_podcert_decision_duration_seconds_count{outcome="issued"}`] +
				m[`ksa_podcert_decision_duration_seconds_count{outcome="denied"}`] + m[`ksa_podcert_decision_duration_seconds_count{outcome="failed"}`]
		}
		_ = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			m = scrape(t, ops)
			return decisions() >= float64(bulkRequests+4), nil
		})
		assert.Equal(t, float64(bulkRequests+2), m[`ksa_podcert_requests_total{outcome="issued",reason="Issued"}`])
		assert.Equal(t, 1.0, m[`ksa_podcert_requests_total{outcome="denied",reason="InvalidUnverifiedUserAnnotations"}`])
		assert.Equal(t, 1.0, m[`ksa_podcert_requests_total{outcome="failed",reason="InvalidRequest"}`])
		assert.Equal(t, float64(bulkRequests+4), decisions())
		assert.Equal(t, 1.0, m["ksa_podcert_trust_bundle_updates_total"])
		assert.Zero(t, m["ksa_podcert_ca_key_errors_total"])
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return scrape(t, ops)["ksa_podcert_oldest_undecided_request_seconds"] == 0, nil
		}), "the oldest undecided request's age returns to 0")
		code, body := get(t, "http://"+ops+"/readyz")
		assert.Equal(t, 200, code, body)
		t.Logf("%s: metrics: %.0f issued, conflicts %.0f, status errors %.0f", version, m[`ksa_podcert_requests_total{outcome="issued",reason="Issued"}`],
			m["ksa_podcert_status_update_conflicts_total"], m["ksa_podcert_status_update_errors_total"])

		out := lastLines(stopSigner(), 3)
		assert.Contains(t, out, fmt.Sprintf("stopped: %d issued, 1 denied, 1 failed", bulkRequests+2))
	})
}

// opsAddr returns the address "ksa podcert serve --ops-addr" logs once it
// listens.
func opsAddr(t *testing.T, output func() string) string {
	t.Helper()
	var addr string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for line := range strings.SplitSeq(output(), "\n") {
			if !strings.Contains(line, "serving /healthz") {
				continue
			}
			for f := range strings.FieldsSeq(line) {
				if v, ok := strings.CutPrefix(f, "addr="); ok {
					addr = v
					return true, nil
				}
			}
		}
		return false, nil
	})
	require.NoError(t, err, "ksa podcert serve logs its --ops-addr: %s", lastLines(output(), 10))
	return addr
}

// get returns the status and body of a plain HTTP GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scrape reads /metrics at addr: each sample's value by its name and
// labels as the text format writes them.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	code, body := get(t, "http://"+addr+"/metrics")
	require.Equal(t, 200, code, body)
	out := map[string]float64{}
	for line := range strings.SplitSeq(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		require.Positive(t, i, line)
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	return out
}

// pcrAPI creates and watches requests in certificates.k8s.io v1 or v1beta1.
type pcrAPI struct {
	cs kubernetes.Interface
	v1 bool
}

// create makes a request as the pod's node does, retrying while the
// apiserver's caches have not seen the pod yet.
func (a pcrAPI) create(t *testing.T, node nodeClient, pod *corev1.Pod, csr []byte, annotations map[string]string) string {
	t.Helper()
	name, err := a.tryCreate(t, node, pod, csr, annotations)
	require.NoError(t, err, "creating a PodCertificateRequest as the node")
	return name
}

// tryCreate is create returning its error, for goroutines other than the
// test's.
func (a pcrAPI) tryCreate(t testing.TB, node nodeClient, pod *corev1.Pod, csr []byte, annotations map[string]string) (string, error) {
	max := int32(86400)
	meta := metav1.ObjectMeta{GenerateName: "req-", Namespace: pod.Namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}}
	var name string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if a.v1 {
			var got *certificatesv1.PodCertificateRequest
			got, err = node.cs.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, &certificatesv1.PodCertificateRequest{ObjectMeta: meta,
				Spec: certificatesv1.PodCertificateRequestSpec{SignerName: podSigner, PodName: pod.Name, PodUID: pod.UID,
					ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: node.saUIDs[pod.Namespace+"/"+pod.Spec.ServiceAccountName],
					NodeName: types.NodeName(node.Name), NodeUID: node.UID, MaxExpirationSeconds: &max, StubPKCS10Request: csr, UnverifiedUserAnnotations: annotations}}, metav1.CreateOptions{})
			if err == nil {
				name = got.Name
			}
		} else {
			var got *certificatesv1beta1.PodCertificateRequest
			got, err = node.cs.CertificatesV1beta1().PodCertificateRequests(pod.Namespace).Create(ctx, &certificatesv1beta1.PodCertificateRequest{ObjectMeta: meta,
				Spec: certificatesv1beta1.PodCertificateRequestSpec{SignerName: podSigner, PodName: pod.Name, PodUID: pod.UID,
					ServiceAccountName: pod.Spec.ServiceAccountName, ServiceAccountUID: node.saUIDs[pod.Namespace+"/"+pod.Spec.ServiceAccountName],
					NodeName: types.NodeName(node.Name), NodeUID: node.UID, MaxExpirationSeconds: &max, StubPKCS10Request: csr, UnverifiedUserAnnotations: annotations}}, metav1.CreateOptions{})
			if err == nil {
				name = got.Name
			}
		}
		if err != nil {
			t.Logf("creating a request as %s: %v (retrying)", node.Name, err)
		}
		return err == nil, nil
	})
	return name, err
}

// watchStatuses calls decided for every request of ns that carries an
// outcome, as the apiserver reports them (existing ones first), until it
// returns true; it gives up after five minutes. It follows the requests
// with an informer, which lists them again when the apiserver ends a watch
// early (its watch cache closes a watcher that falls behind, as one taking
// a thousand requests' events on a loaded machine can). It returns an error
// rather than failing the test, so that it may run in a goroutine of its
// own.
func (a pcrAPI) watchStatuses(t *testing.T, ns string, decided func(name string, st podcert.Status) bool) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var client cache.Getter = a.cs.CertificatesV1beta1().RESTClient()
	var obj runtime.Object = &certificatesv1beta1.PodCertificateRequest{}
	if a.v1 {
		client, obj = a.cs.CertificatesV1().RESTClient(), &certificatesv1.PodCertificateRequest{}
	}
	lw := cache.NewListWatchFromClient(client, "podcertificaterequests", ns, fields.Everything())
	_, err := watchtools.UntilWithSync(ctx, lw, obj, nil, func(ev watch.Event) (bool, error) {
		var name string
		var st podcert.Status
		switch o := ev.Object.(type) {
		case *certificatesv1.PodCertificateRequest:
			name = o.Name
			_, st = kubeapi.PodCertRequest(o)
		case *certificatesv1beta1.PodCertificateRequest:
			name = o.Name
			_, st = kubeapi.PodCertRequestV1beta1(o)
		default:
			return false, nil
		}
		return st.Outcome() != 0 && decided(name, st), nil
	})
	if err != nil {
		return fmt.Errorf("watching requests in %s: %w", ns, err)
	}
	return nil
}

// wait returns the status of the named request once it is decided.
func (a pcrAPI) wait(t *testing.T, ns, name string) podcert.Status {
	t.Helper()
	var got podcert.Status
	err := a.watchStatuses(t, ns, func(n string, st podcert.Status) bool {
		got = st
		return n == name
	})
	require.NoError(t, err)
	return got
}

// waitAll returns the outcomes once n requests of ns are decided.
func (a pcrAPI) waitAll(t *testing.T, ns string, n int) (map[string]podcert.Outcome, error) {
	out := map[string]podcert.Outcome{}
	err := a.watchStatuses(t, ns, func(name string, st podcert.Status) bool {
		out[name] = st.Outcome()
		return len(out) == n
	})
	return out, err
}

// trustBundle reads the published ClusterTrustBundle, as any authenticated
// workload may.
func (a pcrAPI) trustBundle(t *testing.T) string {
	t.Helper()
	name := strings.ReplaceAll(podSigner, "/", ":") + ":primary-bundle"
	if a.v1 {
		b, err := a.cs.CertificatesV1().ClusterTrustBundles().Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, podSigner, b.Spec.SignerName)
		return b.Spec.TrustBundle
	}
	b, err := a.cs.CertificatesV1beta1().ClusterTrustBundles().Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, podSigner, b.Spec.SignerName)
	return b.Spec.TrustBundle
}

// nodeClient is a node and a client holding its credentials.
type nodeClient struct {
	*corev1.Node
	cs kubernetes.Interface
	// saUIDs are the UIDs of the pods' service accounts, by namespace/name.
	saUIDs map[string]types.UID
}

func newNode(t testing.TB, cp *controlplane.ControlPlane) nodeClient {
	t.Helper()
	node, err := cp.Clientset().CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cert, err := cp.ClientCert("system:node:"+node.Name, "system:nodes")
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: cp.URL, QPS: 500, Burst: 1000, TLSClientConfig: rest.TLSClientConfig{
		CAData:   cp.CAPEM,
		CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		KeyData:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}})
	require.NoError(t, err)
	return nodeClient{Node: node, cs: cs, saUIDs: map[string]types.UID{}}
}

// newPod creates a service account and a pod of that name on the node,
// mounting a pod certificate from our signer (NodeRestriction lets the node
// ask only for signers its pods mount).
func newPod(t testing.TB, cp *controlplane.ControlPlane, ns, name string, node nodeClient) *corev1.Pod {
	t.Helper()
	sa, err := cp.Clientset().CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	pod, err := cp.Clientset().CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			ServiceAccountName: name, NodeName: node.Name, AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{Name: "app", Image: "app",
				VolumeMounts: []corev1.VolumeMount{{Name: "identity", MountPath: "/var/run/identity"}}}},
			Volumes: []corev1.Volume{{Name: "identity", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
					SignerName: podSigner, KeyType: "ECDSAP256", CredentialBundlePath: "credentialbundle.pem"}}}}}}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	node.saUIDs[ns+"/"+name] = sa.UID
	return pod
}

// applyRBAC creates the objects of "ksa podcert rbac".
func applyRBAC(t testing.TB, cs kubernetes.Interface, manifests string) {
	t.Helper()
	for doc := range strings.SplitSeq(manifests, "---\n") {
		var meta metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		var err error
		switch meta.Kind {
		case "ServiceAccount":
			var o corev1.ServiceAccount
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o))
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(t.Context(), &o, metav1.CreateOptions{})
		case "ClusterRole":
			var o rbacv1.ClusterRole
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o))
			_, err = cs.RbacV1().ClusterRoles().Create(t.Context(), &o, metav1.CreateOptions{})
		case "ClusterRoleBinding":
			var o rbacv1.ClusterRoleBinding
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o))
			_, err = cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &o, metav1.CreateOptions{})
		case "Role":
			var o rbacv1.Role
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o))
			_, err = cs.RbacV1().Roles(o.Namespace).Create(t.Context(), &o, metav1.CreateOptions{})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &o))
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(t.Context(), &o, metav1.CreateOptions{})
		default:
			t.Fatalf("unexpected kind %q in:\n%s", meta.Kind, doc)
		}
		require.NoError(t, err)
	}
}

// saKubeconfig writes a kubeconfig holding a token of the service account.
func saKubeconfig(t testing.TB, cp *controlplane.ControlPlane, ns, sa, dir string) string {
	t.Helper()
	exp := int64(3600)
	tr, err := cp.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.CAPEM}
	cfg.AuthInfos["signer"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["signer"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "signer"}
	cfg.CurrentContext = "signer"
	path := filepath.Join(dir, "signer.kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startSigner runs "ksa podcert ARGS..." in the background; stop stops it
// with SIGTERM and returns its output, output returns it so far.
func startSigner(t *testing.T, bin, dir string, args ...string) (stop, output func() string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"podcert"}, args...)...)
	cmd.Dir = dir
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop = func() string {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			assert.NoError(t, err, "ksa podcert serve: %s", lastLines(out.String(), 20))
		})
		return out.String()
	}
	t.Cleanup(func() {
		out := stop()
		if t.Failed() {
			t.Logf("ksa podcert serve:\n%s", lastLines(out, 40))
		}
	})
	return stop, out.String
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func podCA(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa pod identity CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

// stubCSR is the kubelet's proof of possession: a PKCS#10 request with an
// empty subject (or, to be refused, one naming cn).
func stubCSR(t testing.TB, key crypto.Signer, cn string) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	require.NoError(t, err)
	return der
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}

// writeBundle writes the credential bundle the kubelet mounts: the
// PKCS#8 key, then the chain.
func writeBundle(t *testing.T, dir, name string, key crypto.Signer, chain string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	path := filepath.Join(dir, name+"-credentialbundle.pem")
	require.NoError(t, os.WriteFile(path, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), chain...), 0o600))
	return path
}

func firstCert(t *testing.T, chain string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(chain))
	require.NotNil(t, b)
	c, err := x509.ParseCertificate(b.Bytes)
	require.NoError(t, err)
	return c
}

// whoAmICert asks kube-apiserver who the certificate's holder is.
func whoAmICert(t *testing.T, cp *controlplane.ControlPlane, chain string, key crypto.Signer) authenticationv1.UserInfo {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: cp.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: cp.CAPEM, CertData: []byte(chain), KeyData: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})}})
	require.NoError(t, err)
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return r.Status.UserInfo
}

// mutualTLS connects the client pod to the server pod over loopback TCP,
// each presenting its mounted bundle and verifying the other with the
// trust bundle; it returns what each learned of the other.
func mutualTLS(t *testing.T, trust, clientBundle, serverBundle, serverName string) (clientSaw, serverSaw ksaid.Identity) {
	t.Helper()
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: []byte(trust), TrustDomain: podcert.DefaultTrustDomain})
	require.NoError(t, err)
	source := func(path string) *podcert.Source {
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path})
		require.NoError(t, err)
		return src
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", peers.ServerConfig(source(serverBundle), nil))
	require.NoError(t, err)
	defer l.Close()
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			served <- err
			return
		}
		serverSaw, err = peers.VerifyClient(tc.ConnectionState().PeerCertificates)
		served <- err
	}()
	cfg := peers.ClientConfig(source(clientBundle), nil)
	cfg.ServerName = serverName
	c, err := tls.Dial("tcp", l.Addr().String(), cfg)
	require.NoError(t, err)
	defer c.Close()
	clientSaw, err = peers.VerifyServer(c.ConnectionState().PeerCertificates)
	require.NoError(t, err)
	require.NoError(t, <-served)
	return clientSaw, serverSaw
}

// podcertPlane starts a control plane for pod certificates on version
// (certificates.k8s.io/v1 on 1.37; v1beta1 and its feature gates on 1.36)
// with NodeRestriction on, trusting clientCAs for X.509 logins, and a
// service account for the signer holding only the RBAC "ksa podcert rbac"
// prints. It returns the plane, its request API and that account's
// kubeconfig.
func podcertPlane(t *testing.T, version, bin, work string, clientCAs ...*x509.Certificate) (*controlplane.ControlPlane, pcrAPI, string) {
	t.Helper()
	v1 := !strings.HasPrefix(version, "v1.36.")
	cfg := controlplane.Config{Version: version, ClientCAs: clientCAs, EnableAdmissionPlugins: []string{"NodeRestriction"}}
	if !v1 {
		cfg.FeatureGates = map[string]bool{"PodCertificateRequest": true, "ClusterTrustBundle": true}
		cfg.RuntimeConfig = map[string]string{"certificates.k8s.io/v1beta1": "true"}
	}
	cp := controlplane.StartForTest(t, cfg)
	signerNS := cp.Namespace(t)
	rbac, code := ksa(t, bin, work, "podcert", "rbac", "--signer-name", podSigner, "--namespace", signerNS, "--service-account", "podcert-signer", "--no-namespace")
	require.Equal(t, 0, code)
	applyRBAC(t, cp.Clientset(), rbac)
	return cp, pcrAPI{cs: cp.Clientset(), v1: v1}, saKubeconfig(t, cp, signerNS, "podcert-signer", work)
}
