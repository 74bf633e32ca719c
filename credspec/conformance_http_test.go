package credspec_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/podcert"
)

const testUID = types.UID("f0e1d2c3-0000-4000-8000-000000000001")

// webhookServer is an httptest server running the handler over fakes.
type webhookServer struct {
	*httptest.Server
	source *fakeSource
	authz  *fakeAuthorizer
}

func newWebhookServer(t *testing.T) *webhookServer {
	t.Helper()
	ws := &webhookServer{source: &fakeSource{}, authz: &fakeAuthorizer{}}
	h, err := credspec.NewHandler(credspec.HandlerConfig{
		Expander:  newExpander(t, credspec.ExpanderConfig{Source: ws.source}),
		Validator: newValidator(t, ws.source, ws.authz),
	})
	require.NoError(t, err)
	ws.Server = httptest.NewServer(h)
	t.Cleanup(ws.Close)
	return ws
}

// reviewRequest builds an AdmissionReview for a pod.
func reviewRequest(t testing.TB, op admissionv1.Operation, kind string, pod, old *corev1.Pod) []byte {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID:       testUID,
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: kind},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: dummyNamespace,
		Operation: op,
		UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
	}
	if pod != nil {
		raw, err := json.Marshal(pod)
		require.NoError(t, err)
		req.Object = runtime.RawExtension{Raw: raw}
	}
	if old != nil {
		raw, err := json.Marshal(old)
		require.NoError(t, err)
		req.OldObject = runtime.RawExtension{Raw: raw}
	}
	b, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	require.NoError(t, err)
	return b
}

// post sends body and returns the HTTP status, the raw body and, for 200,
// the decoded review.
func post(t *testing.T, url, method, contentType string, body []byte) (int, []byte, *admissionv1.AdmissionReview) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, raw, nil
	}
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(raw, &review))
	require.NotNil(t, review.Response)
	return resp.StatusCode, raw, &review
}

func podWithPodLevelName() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: dummyPodName, Namespace: dummyNamespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: dummyServiceAccountName,
			SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new(dummyCredSpecName)}},
			Containers:         []corev1.Container{{Name: dummyContainerName, Image: "image"}},
		},
	}
}

// TestConformanceHTTP holds the handler to windows-gmsa's HTTP tests, and
// refuses a JSON content type with parameters (415).
func TestConformanceHTTP(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, ws *webhookServer)
	}{
		{name: "01_mutate_create_adds_contents_at_pod_level", run: func(t *testing.T, ws *webhookServer) {
			code, _, review := post(t, ws.URL+"/mutate", http.MethodPost, "application/json",
				reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
			require.Equal(t, http.StatusOK, code)
			assert.Equal(t, "admission.k8s.io/v1", review.APIVersion)
			assert.Equal(t, "AdmissionReview", review.Kind)
			resp := review.Response
			assert.Equal(t, testUID, resp.UID)
			assert.True(t, resp.Allowed)
			require.NotNil(t, resp.PatchType)
			assert.Equal(t, admissionv1.PatchTypeJSONPatch, *resp.PatchType)
			var patch []map[string]string
			require.NoError(t, json.Unmarshal(resp.Patch, &patch))
			assert.Equal(t, []map[string]string{{
				"op":    "add",
				"path":  "/spec/securityContext/windowsOptions/gmsaCredentialSpec",
				"value": canonical(t, dummyCredSpecContents),
			}}, patch)
		}},
		{name: "02_validate_create_sar_denied_is_403", run: func(t *testing.T, ws *webhookServer) {
			ws.authz.decide = denyName(dummyCredSpecName, "bogus reason")
			code, _, review := post(t, ws.URL+"/validate", http.MethodPost, "application/json",
				reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
			require.Equal(t, http.StatusOK, code)
			resp := review.Response
			assert.Equal(t, testUID, resp.UID)
			assert.False(t, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			assert.Contains(t, resp.Result.Message, "service account \"dummy-service-account-name\" is not authorized to `use` GMSA cred spec")
			assert.Contains(t, resp.Result.Message, `reason: "bogus reason"`)
			assert.Equal(t, metav1.StatusReasonForbidden, resp.Result.Reason)
		}},
		{name: "03_put_is_405_without_review", run: func(t *testing.T, ws *webhookServer) {
			for _, path := range []string{"/validate", "/mutate"} {
				code, body, _ := post(t, ws.URL+path, http.MethodPut, "application/json",
					reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
				assert.Equal(t, http.StatusMethodNotAllowed, code, path)
				assert.Empty(t, body, path)
			}
		}},
		{name: "04_text_plain_is_415_without_review", run: func(t *testing.T, ws *webhookServer) {
			code, body, _ := post(t, ws.URL+"/validate", http.MethodPost, "text/plain",
				reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
			assert.Equal(t, http.StatusUnsupportedMediaType, code)
			assert.Empty(t, body)
		}},
		{name: "05_deployment_is_denied_400", run: func(t *testing.T, ws *webhookServer) {
			for _, path := range []string{"/validate", "/mutate"} {
				code, _, review := post(t, ws.URL+path, http.MethodPost, "application/json",
					reviewRequest(t, admissionv1.Create, "Deployment", podWithPodLevelName(), nil))
				require.Equal(t, http.StatusOK, code, path)
				assert.False(t, review.Response.Allowed, path)
				assert.Equal(t, testUID, review.Response.UID, path)
				assert.Equal(t, int32(http.StatusBadRequest), review.Response.Result.Code, path)
				assert.Equal(t, "expected a Pod object, got a Deployment", review.Response.Result.Message, path)
			}
		}},
		{name: "06_unknown_path_is_404", run: func(t *testing.T, ws *webhookServer) {
			code, _, _ := post(t, ws.URL+"/i_dont_exist", http.MethodPost, "application/json", nil)
			assert.Equal(t, http.StatusNotFound, code)
		}},
		{name: "07_tls_with_cert_reload_serves", run: func(t *testing.T, ws *webhookServer) {
			dir := t.TempDir()
			c := newTestCert(t, 7)
			certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
			require.NoError(t, os.WriteFile(certFile, c.certPEM, 0o600))
			require.NoError(t, os.WriteFile(keyFile, c.keyPEM, 0o600))
			reloader, err := podcert.NewSource(podcert.SourceConfig{KeyPath: keyFile, ChainPath: certFile, AnyCertificate: true})
			require.NoError(t, err)
			cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: reloader.GetCertificate}
			require.NotNil(t, cfg.GetCertificate)

			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			srv := &http.Server{Handler: ws.Config.Handler}
			go func() { _ = srv.Serve(tls.NewListener(ln, cfg)) }()
			t.Cleanup(func() { _ = srv.Close() })

			pool := x509.NewCertPool()
			pool.AddCert(c.cert)
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+ln.Addr().String()+"/health", nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusNoContent, resp.StatusCode)
			assert.Equal(t, c.cert.SerialNumber, resp.TLS.PeerCertificates[0].SerialNumber)
		}},
		{name: "56_content_type_with_charset_is_415", run: func(t *testing.T, ws *webhookServer) {
			code, _, _ := post(t, ws.URL+"/mutate", http.MethodPost, "application/json; charset=utf-8",
				reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
			assert.Equal(t, http.StatusUnsupportedMediaType, code)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newWebhookServer(t)) })
	}
}
