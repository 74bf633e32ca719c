package podcertctl_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

// fakeClient hands client-go's fake clientset to the controller, as an
// importer's program does with its clientset. The fake's
// IsWatchListSemanticsUnSupported, passed on, tells the informer to list
// rather than stream.
func fakeClient(t testing.TB, cs *fake.Clientset) podcertctl.Client {
	t.Helper()
	c, err := clientgo.New(cs)
	require.NoError(t, err)
	return c
}

// apiServer answers the requests the controller makes of
// certificates.k8s.io/v1 as kube-apiserver would, with one request to
// decide: discovery, the trust bundle's creation, the list (the streamed
// initial list is refused, as by a server without watch-list), a watch that
// stays open, and the status write. It keeps the bodies it was sent.
type apiServer struct {
	t        *testing.T
	pcr      *certificatesv1.PodCertificateRequest
	decoder  runtime.Decoder
	mu       sync.Mutex
	bundle   *certificatesv1.ClusterTrustBundle
	status   *certificatesv1.PodCertificateRequest
	types    []string // Content-Type of each body sent
	agents   map[string]bool
	selector string
}

func newAPIServer(t *testing.T, pcr *certificatesv1.PodCertificateRequest) *apiServer {
	scheme := runtime.NewScheme()
	require.NoError(t, certificatesv1.AddToScheme(scheme))
	return &apiServer{t: t, pcr: pcr, decoder: serializer.NewCodecFactory(scheme).UniversalDeserializer(), agents: map[string]bool{}}
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const gv = "/apis/certificates.k8s.io/v1"
	s.mu.Lock()
	s.agents[r.UserAgent()] = true
	s.mu.Unlock()
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == gv:
		writeJSON(w, http.StatusOK, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "certificates.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "podcertificaterequests", Namespaced: true}}})
	case r.Method == http.MethodPost && r.URL.Path == gv+"/clustertrustbundles":
		b := &certificatesv1.ClusterTrustBundle{}
		s.decode(r, b)
		s.mu.Lock()
		s.bundle = b
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, b)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, gv+"/clustertrustbundles/"):
		// Read before publishing: none yet; then the one created.
		s.mu.Lock()
		b := s.bundle
		s.mu.Unlock()
		if b != nil {
			writeJSON(w, http.StatusOK, b)
			return
		}
		writeJSON(w, http.StatusNotFound, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound})
	case r.Method == http.MethodGet && r.URL.Path == gv+"/podcertificaterequests" && q.Get("sendInitialEvents") == "true":
		writeJSON(w, http.StatusBadRequest, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: "watch-list is off"})
	case r.Method == http.MethodGet && r.URL.Path == gv+"/podcertificaterequests" && q.Get("watch") == "true":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case r.Method == http.MethodGet && r.URL.Path == gv+"/podcertificaterequests":
		s.mu.Lock()
		s.selector = q.Get("fieldSelector")
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, &certificatesv1.PodCertificateRequestList{
			TypeMeta: metav1.TypeMeta{Kind: "PodCertificateRequestList", APIVersion: "certificates.k8s.io/v1"},
			ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []certificatesv1.PodCertificateRequest{*s.pcr}})
	case r.Method == http.MethodPut && r.URL.Path == gv+"/namespaces/shop/podcertificaterequests/req-1/status":
		p := &certificatesv1.PodCertificateRequest{}
		s.decode(r, p)
		s.mu.Lock()
		s.status = p
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, p)
	default:
		assert.Failf(s.t, "unexpected request", "%s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// decode reads a request's body, in whichever encoding the client chose.
func (s *apiServer) decode(r *http.Request, into runtime.Object) {
	body, err := io.ReadAll(r.Body)
	assert.NoError(s.t, err)
	s.mu.Lock()
	s.types = append(s.types, r.Header.Get("Content-Type"))
	s.mu.Unlock()
	_, _, err = s.decoder.Decode(body, nil, into)
	assert.NoError(s.t, err)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// TestRESTClientRunsTheController decides a request through NewRESTClient
// against an API server: discovery finds v1, the CA is published, the
// informer lists with the signer's field selector, and the status written
// is the decision, sent as protobuf as client-go's clientset sends it.
func TestRESTClientRunsTheController(t *testing.T) {
	pcr := &certificatesv1.PodCertificateRequest{
		TypeMeta:   metav1.TypeMeta{Kind: "PodCertificateRequest", APIVersion: "certificates.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1", ResourceVersion: "7"}, Spec: spec(t, signerName, "")}
	api := newAPIServer(t, pcr)
	srv := httptest.NewServer(api)
	defer srv.Close()
	cs, err := podcertctl.NewRESTClient(&rest.Config{Host: srv.URL, UserAgent: "ksa-test", QPS: 50, Burst: 100})
	require.NoError(t, err)
	signer := newSigner(t)
	events := make(chan podcertctl.Event, 1)
	ctl, err := podcertctl.New(podcertctl.Config{Client: cs, Signer: signer, Observe: func(e podcertctl.Event) { events <- e }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	e := next(t, events)
	cancel()
	require.NoError(t, <-done)

	require.NoError(t, e.Err)
	require.NotNil(t, e.Decision)
	assert.Equal(t, podcert.Issued, e.Decision.Outcome)
	api.mu.Lock()
	defer api.mu.Unlock()
	require.NotNil(t, api.bundle)
	assert.Equal(t, "example.com:pods:primary-bundle", api.bundle.Name)
	assert.Equal(t, string(signer.TrustBundle()), api.bundle.Spec.TrustBundle)
	assert.Equal(t, "spec.signerName=example.com/pods", api.selector)
	require.NotNil(t, api.status)
	assert.Equal(t, "7", api.status.ResourceVersion, "the status write must carry the version read")
	_, st := kubeapi.PodCertRequest(api.status)
	assert.Equal(t, podcert.Issued, st.Outcome())
	assert.Equal(t, []string{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"}, api.types)
	assert.Equal(t, map[string]bool{"ksa-test": true}, api.agents)
}

func TestRESTClientDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name         string
		status       int
		body         any
		want         string
		wantNotFound bool
	}{
		{name: "v1 serves podcertificaterequests", status: http.StatusOK, want: podcertctl.V1,
			body: &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "certificates.k8s.io/v1",
				APIResources: []metav1.APIResource{{Name: "certificatesigningrequests"}, {Name: "podcertificaterequests"}}}},
		{name: "v1 without podcertificaterequests", status: http.StatusOK, want: podcertctl.V1beta1,
			body: &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "certificates.k8s.io/v1",
				APIResources: []metav1.APIResource{{Name: "certificatesigningrequests"}}}},
		{name: "no v1: not found", status: http.StatusNotFound, want: podcertctl.V1beta1, wantNotFound: true,
			body: map[string]string{"message": "404 page not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/apis/certificates.k8s.io/v1", r.URL.Path)
				writeJSON(w, tc.status, tc.body)
			}))
			defer srv.Close()
			cs, err := podcertctl.NewRESTClient(&rest.Config{Host: srv.URL})
			require.NoError(t, err)
			_, err = cs.ServerResourcesForGroupVersion("certificates.k8s.io/v1")
			assert.Equal(t, tc.wantNotFound, apierrors.IsNotFound(err), "%v", err)
			ctl, err := podcertctl.New(podcertctl.Config{Client: cs, Signer: newSigner(t)})
			require.NoError(t, err)
			got, err := ctl.APIVersion()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNewRESTClientRefusesQPSWithoutBurst(t *testing.T) {
	_, err := podcertctl.NewRESTClient(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 5})
	require.Error(t, err)
	assert.Regexp(t, `^podcertctl: client burst 0: `, err.Error())
}
