package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ksa-go/ksa/podcert"
)

type started struct {
	addr    string
	certPEM []byte
}

// start runs the program with args on a loopback port and returns a client
// trusting its certificate.
func start(t *testing.T, args ...string) (string, *http.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	readyc := make(chan started, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), io.Discard, func(addr string, certPEM []byte) {
			readyc <- started{addr, certPEM}
		})
	}()
	var s started
	select {
	case s = <-readyc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(s.certPEM))
	return "https://" + s.addr, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func review(t *testing.T, client *http.Client, url string, pod *corev1.Pod) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(pod)
	require.NoError(t, err)
	body, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: pod.Namespace,
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
		},
	})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Response
}

func gmsaPod(sa, contents string) *corev1.Pod {
	opts := &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01")}
	if contents != "" {
		opts.GMSACredentialSpec = &contents
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{ServiceAccountName: sa, SecurityContext: &corev1.PodSecurityContext{WindowsOptions: opts},
			Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
}

func TestDefaultsServeTheDemo(t *testing.T) {
	base, client := start(t)
	resp := review(t, client, base+"/mutate", gmsaPod("default", ""))
	require.True(t, resp.Allowed)
	var patch []struct{ Op, Path, Value string }
	require.NoError(t, json.Unmarshal(resp.Patch, &patch))
	require.Len(t, patch, 1)
	assert.Equal(t, "/spec/securityContext/windowsOptions/gmsaCredentialSpec", patch[0].Path)

	assert.True(t, review(t, client, base+"/validate", gmsaPod("default", patch[0].Value)).Allowed)
	denied := review(t, client, base+"/validate", gmsaPod("other", patch[0].Value))
	assert.False(t, denied.Allowed)
	assert.Equal(t, int32(403), denied.Result.Code)
}

func TestCertificateFilesAndAllowList(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCertificate(t, certFile, keyFile, "first")
	specs := filepath.Join(dir, "specs.yaml")
	require.NoError(t, os.WriteFile(specs, []byte(demoCredSpec), 0o600))

	base, client := start(t, "-tls-cert-file", certFile, "-tls-key-file", keyFile, "-credspecs", specs,
		"-allow", "system:serviceaccount:default:frontend=webapp01")
	resp := review(t, client, base+"/validate", gmsaPod("frontend", ""))
	assert.True(t, resp.Allowed)
	resp = review(t, client, base+"/validate", gmsaPod("default", ""))
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `reason: "not in the -allow list"`)
}

func TestBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"cert_without_key": {"-tls-cert-file", "x"},
		"bad_allow":        {"-allow", "nobody"},
		"missing_specs":    {"-credspecs", filepath.Join(t.TempDir(), "none.yaml")},
		"unknown_flag":     {"-nope"},
	} {
		assert.Error(t, run(t.Context(), args, io.Discard, nil), name)
	}
}

// TestCertificateRotation: certificate files replaced while the webhook
// runs (a renewed kubernetes.io/tls Secret) are served from the next
// handshake on, without a restart.
func TestCertificateRotation(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeCertificate(t, certFile, keyFile, "first")
	base, _ := start(t, "-tls-cert-file", certFile, "-tls-key-file", keyFile)
	assert.Equal(t, first.Raw, servedCertificate(t, base, first).Raw)

	second := writeCertificate(t, certFile, keyFile, "second")
	assert.Equal(t, second.Raw, servedCertificate(t, base, second).Raw, "the renewed certificate is served without a restart")
}

// writeCertificate makes a self-signed certificate named cn and replaces
// the key and certificate files with it, each by a rename, as Secret
// volumes are updated.
func writeCertificate(t *testing.T, certFile, keyFile, cn string) *x509.Certificate {
	t.Helper()
	cert, certPEM, err := podcert.SelfSigned(podcert.SelfSignedConfig{CommonName: cn})
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	for name, data := range map[string][]byte{keyFile: pemBlock("PRIVATE KEY", keyDER), certFile: certPEM} {
		require.NoError(t, os.WriteFile(name+".new", data, 0o600))
		require.NoError(t, os.Rename(name+".new", name))
	}
	return cert.Leaf
}

// servedCertificate opens a new connection to base, trusting want alone,
// and returns the leaf the server presents.
func servedCertificate(t *testing.T, base string, want *x509.Certificate) *x509.Certificate {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(want)
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(t.Context(), "tcp", strings.TrimPrefix(base, "https://"))
	require.NoError(t, err)
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
