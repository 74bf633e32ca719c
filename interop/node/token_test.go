package node_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/node"
	"github.com/ksa-go/ksa/oidc"
)

// tokenAudience is the audience of the projected tokens.
const tokenAudience = "https://relying-party.ksa.test"

// TestProjectedTokenVerifies: a pod on the node gets a projected
// service-account token for an audience, written by the kubelet; ksa's
// verifier, discovering the control plane's issuer, accepts it, and it is
// bound to that pod (its name and UID) on that node.
func TestProjectedTokenVerifies(t *testing.T) {
	n := cluster.Get(t)
	cp := n.ControlPlane()
	ns := n.Namespace(t)

	pod := node.ProbePod("token", "/var/run/ksa/token")
	pod.Spec.Volumes = []corev1.Volume{{
		Name: "token",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: tokenAudience, ExpirationSeconds: new(int64(3600)), Path: "token",
			}}},
		}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/ksa", ReadOnly: true}}
	running, err := n.RunPod(t.Context(), ns, pod)
	require.NoError(t, err)
	files, err := n.ProbeFiles(t.Context(), running)
	require.NoError(t, err)
	tok := files["/var/run/ksa/token"]
	require.Empty(t, tok.Error)

	// The verifier discovers the issuer (the in-cluster name) at the
	// control plane, with a token of the admin's asking as the bearer.
	client := inClusterClient(cp)
	bearer := requestToken(t, cp, ns)
	creds := func(context.Context) (string, error) { return bearer, nil }
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers:           []string{cp.Issuers[0]},
		Client:            client,
		BearerToken:       creds,
		KeySetBearerToken: creds,
		Audiences:         []string{tokenAudience},
	})
	require.NoError(t, err)
	res, err := v.Verify(t.Context(), strings.TrimSpace(tok.Data))
	require.NoError(t, err)

	assert.Equal(t, "system:serviceaccount:"+ns+":default", res.UserInfo().Username)
	k := res.Claims.Kubernetes
	require.NotNil(t, k)
	require.NotNil(t, k.Pod, "the token is bound to the pod")
	assert.Equal(t, running.Name, k.Pod.Name)
	assert.Equal(t, string(running.UID), k.Pod.UID)
	require.NotNil(t, k.Node, "a pod-bound token names the pod's node")
	assert.Equal(t, n.Name, k.Node.Name)
	assert.True(t, strings.HasPrefix(n.Name, "ksa-node-"), "the default name: %s", n.Name)
	assert.Equal(t, []string{tokenAudience}, res.Audiences)
	assert.WithinDuration(t, res.Claims.IssuedAt.Add(time.Hour), res.Claims.Expiry, time.Second)
}

// inClusterClient returns a client that trusts the control plane's CA and
// sends every request to it: the issuer's host is the in-cluster Service
// name.
func inClusterClient(cp *controlplane.ControlPlane) *http.Client {
	addr := strings.TrimPrefix(cp.URL, "https://")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = cp.CertPool
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// requestToken returns a token of the namespace's default service
// account for the API's audience: a bearer that may read the discovery
// documents.
func requestToken(t *testing.T, cp *controlplane.ControlPlane, ns string) string {
	t.Helper()
	tr, err := cp.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(600))},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}
