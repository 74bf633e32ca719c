package node_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/node"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// signerManifest is the static pod of `ksa signer serve` the test runs:
// the one deploy/signer ships.
const signerManifest = "../../deploy/signer/ksa-signer.yaml"

// TestSignerStaticPod: `ksa signer serve` from the ksa image runs as a
// static pod of the kubelet (system-node-critical, its socket in a
// root-owned 0700 host directory, its key in another); kube-apiserver,
// started after it with --service-account-signing-endpoint at that
// socket, signs a pod's projected token through it, and ksa's verifier,
// discovering the issuer, accepts the token, signed with the signer's
// key.
func TestSignerStaticPod(t *testing.T) {
	node.BinariesForTest(t)
	cp := controlplane.StartForTest(t, node.ControlPlaneConfig(controlplane.Config{}))
	// The kubelet reaches kube-apiserver through a proxy, which follows it
	// when it restarts on another port.
	proxy := startProxy(t, cp.URL)
	// The host directories: root's, 0700, in a directory of the test's
	// rather than /run/ksa-signer and /etc/kubernetes/pki/ksa-signer. Not
	// in the node's: its teardown kills every process that names its
	// directory on its command line, kube-apiserver's signing endpoint
	// included. Made before the node, they are removed after it stops.
	host, err := os.MkdirTemp("", "ksa-signer-test-")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.RemoveAll(host)) })
	socketDir := filepath.Join(host, "run-ksa-signer")
	keyDir := filepath.Join(host, "pki-ksa-signer")
	require.NoError(t, os.Mkdir(socketDir, 0o700))
	require.NoError(t, os.Mkdir(keyDir, 0o700))
	n := node.StartForTest(t, cp, node.Config{APIServer: proxy.URL()})

	res := importKsaImage(t, n)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(keyDir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	published, err := jwks.NewKey(key.Public())
	require.NoError(t, err)

	pod := signerPod(t, res.Image.Name, socketDir, keyDir)
	manifest := filepath.Join(n.Files.StaticPods, "ksa-signer.json")
	data, err := json.Marshal(pod)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(manifest, data, 0o600))
	// The static pod goes before the node: its mirror pod would come back.
	t.Cleanup(func() { _ = os.Remove(manifest) })

	sock := filepath.Join(socketDir, "signer.sock")
	waitForSocket(t, sock)
	require.NoError(t, cp.RestartAPIServer(t.Context(), controlplane.APIServerConfig{SigningEndpoint: sock}))
	proxy.SetTarget(cp.URL)

	// The mirror pod: the kubelet reports its static pod, critical.
	mirror := waitForMirrorPod(t, cp, "ksa-signer-"+n.Name)
	assert.Equal(t, "system-node-critical", mirror.Spec.PriorityClassName)
	require.NotNil(t, mirror.Spec.Priority)
	assert.Positive(t, *mirror.Spec.Priority)

	ns := n.Namespace(t)
	probe := node.ProbePod("token", "/var/run/ksa/token")
	probe.Spec.Volumes = []corev1.Volume{{
		Name: "token",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: tokenAudience, ExpirationSeconds: new(int64(3600)), Path: "token",
			}}},
		}},
	}}
	probe.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/ksa", ReadOnly: true}}
	running, err := n.RunPod(t.Context(), ns, probe)
	require.NoError(t, err)
	files, err := n.ProbeFiles(t.Context(), running)
	require.NoError(t, err)
	tok := files["/var/run/ksa/token"]
	require.Empty(t, tok.Error)

	bearer := requestToken(t, cp, ns)
	creds := func(context.Context) (string, error) { return bearer, nil }
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers:           []string{cp.Issuers[0]},
		Client:            inClusterClient(cp),
		BearerToken:       creds,
		KeySetBearerToken: creds,
		Audiences:         []string{tokenAudience},
	})
	require.NoError(t, err)
	got, err := v.Verify(t.Context(), strings.TrimSpace(tok.Data))
	require.NoError(t, err)
	assert.Equal(t, published.KeyID, got.KeyID, "signed by the static pod's key")
	assert.Equal(t, "ES256", got.Algorithm)
	assert.Equal(t, "system:serviceaccount:"+ns+":default", got.UserInfo().Username)
	require.NotNil(t, got.Claims.Kubernetes.Pod)
	assert.Equal(t, running.Name, got.Claims.Kubernetes.Pod.Name)
}

// signerPod reads the static pod of signerManifest with the test's image
// and host directories: the hostPath volume "socket" becomes socketDir,
// and "key" keyDir, or the file key.pem in it when the volume is of type
// File.
func signerPod(t *testing.T, image, socketDir, keyDir string) *corev1.Pod {
	t.Helper()
	raw, err := os.ReadFile(signerManifest)
	require.NoError(t, err)
	var pod corev1.Pod
	require.NoError(t, yaml.UnmarshalStrict(raw, &pod))
	require.Len(t, pod.Spec.Containers, 1)
	pod.Spec.Containers[0].Image = image
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	paths := map[string]string{"socket": socketDir, "key": keyDir}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		p, ok := paths[vol.Name]
		require.True(t, ok && vol.HostPath != nil, "volume %s of %s", vol.Name, signerManifest)
		if vol.HostPath.Type != nil && *vol.HostPath.Type == corev1.HostPathFile {
			p = filepath.Join(p, "key.pem")
		}
		vol.HostPath.Path = p
		delete(paths, vol.Name)
	}
	require.Empty(t, paths, "volumes missing from %s", signerManifest)
	return &pod
}

// waitForSocket waits until something listens on the unix socket sock.
func waitForSocket(t *testing.T, sock string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "unix", sock)
		if err == nil {
			require.NoError(t, c.Close())
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing listens on %s: %v", sock, err)
		case <-tick.C:
		}
	}
}

// waitForMirrorPod waits until the mirror pod named name in kube-system
// is Running.
func waitForMirrorPod(t *testing.T, cp *controlplane.ControlPlane, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		p, err := cp.Clientset().CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mirror pod kube-system/%s not running: %v", name, err)
		case <-tick.C:
		}
	}
}

// proxy forwards TCP connections to a target it can be told to change.
type proxy struct {
	ln     net.Listener
	target atomic.Pointer[string]
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// startProxy listens on 127.0.0.1 and forwards to the host of url, until
// the test ends.
func startProxy(t *testing.T, url string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, conns: map[net.Conn]bool{}}
	p.SetTarget(url)
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// URL is the proxy's, "https://127.0.0.1:PORT".
func (p *proxy) URL() string { return "https://" + p.ln.Addr().String() }

// SetTarget makes new connections go to the host of url; open ones are
// closed, so that clients reconnect.
func (p *proxy) SetTarget(url string) {
	host := strings.TrimPrefix(url, "https://")
	p.target.Store(&host)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward copies between c and a connection to the target.
func (p *proxy) forward(c net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", *p.target.Load())
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // either side closing ends both
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
