package podcertctl_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

const signerName = "example.com/pods"

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func newSigner(t testing.TB) *podcert.Signer {
	t.Helper()
	return newSignerWithKey(t, newCAKey(t))
}

func newCAKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

// newSignerWithKey is a signer whose CA key is key (a crypto.Signer over
// an ECDSA P-256 key).
func newSignerWithKey(t testing.TB, key crypto.Signer) *podcert.Signer {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pods CA"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: signerName, Key: key, Chain: []*x509.Certificate{ca},
		Now: func() time.Time { return t0 }})
	require.NoError(t, err)
	return s
}

// csr is a stub PKCS#10 request as the kubelet makes it (empty subject),
// or with a subject, which the signer fails.
func csr(t testing.TB, subject string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: subject}}, crypto.Signer(key))
	require.NoError(t, err)
	return der
}

func spec(t testing.TB, signer, subject string) certificatesv1.PodCertificateRequestSpec {
	max := int32(86400)
	return certificatesv1.PodCertificateRequestSpec{
		SignerName: signer, PodName: "cart-1", PodUID: types.UID("0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60"),
		ServiceAccountName: "cart", ServiceAccountUID: types.UID("8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"),
		NodeName: "node-1", NodeUID: types.UID("5b1e0c3d-2222-4c1e-9a7f-1b2c3d4e5f60"),
		MaxExpirationSeconds: &max, StubPKCS10Request: csr(t, subject),
	}
}

// run starts a controller on cs and returns a channel of its events; it
// is stopped when the test ends.
func run(t *testing.T, cs *fake.Clientset, cfg podcertctl.Config) (*podcertctl.Controller, <-chan podcertctl.Event) {
	t.Helper()
	ctl, events, _ := start(t, cs, cfg)
	return ctl, events
}

// start is run, with a function that stops the controller and returns once
// Run has (every status write and log line done).
func start(t *testing.T, cs *fake.Clientset, cfg podcertctl.Config) (*podcertctl.Controller, <-chan podcertctl.Event, func()) {
	t.Helper()
	events := make(chan podcertctl.Event, 16)
	cfg.Client = fakeClient(t, cs)
	if cfg.Signer == nil {
		cfg.Signer = newSigner(t)
	}
	cfg.Observe = func(e podcertctl.Event) { events <- e }
	ctl, err := podcertctl.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			for { // events meanwhile must not block Run
				select {
				case err := <-done:
					require.NoError(t, err)
					return
				case <-events:
				}
			}
		})
	}
	t.Cleanup(stop)
	return ctl, events, stop
}

// nextEvent waits for the next event; the deadline only keeps a broken
// test from hanging.
func nextEvent(t *testing.T, events <-chan podcertctl.Event) podcertctl.Event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
		return podcertctl.Event{}
	}
}

// next waits for the next event about a request, passing over the others
// (the trust bundle written).
func next(t *testing.T, events <-chan podcertctl.Event) podcertctl.Event {
	t.Helper()
	for {
		if e := nextEvent(t, events); e.Name != "" {
			return e
		}
	}
}

func TestControllerDecidesV1(t *testing.T) {
	for _, tc := range []struct {
		name        string
		subject     string
		annotations map[string]string
		status      certificatesv1.PodCertificateRequestStatus
		want        podcert.Outcome
		wantReason  string
	}{
		{name: "a kubelet's request is issued", want: podcert.Issued, wantReason: podcert.ReasonIssued},
		{name: "hosts no policy admits: denied", annotations: map[string]string{podcert.DefaultServeHostsKey: "cart.shop.svc"},
			want: podcert.Denied, wantReason: podcert.ReasonInvalidUnverifiedUserAnnotations},
		{name: "a CSR with a subject: failed", subject: "admin", want: podcert.Failed, wantReason: podcert.ReasonInvalidRequest},
		{name: "already decided: left alone", status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{
			{Type: podcert.ConditionDenied, Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: metav1.NewTime(t0)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1", UID: "3c5e2f0a-4d1b-4c1e-9a7f-1b2c3d4e5f60"},
				Spec: spec(t, signerName, tc.subject), Status: tc.status}
			pcr.Spec.UnverifiedUserAnnotations = tc.annotations
			cs := fake.NewClientset(pcr)
			ctl, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1})
			e := next(t, events)
			require.NoError(t, e.Err)
			assert.Equal(t, "shop", e.Namespace)
			assert.Equal(t, "req-1", e.Name)
			assert.Equal(t, pcr.UID, e.UID)
			got, err := cs.CertificatesV1().PodCertificateRequests("shop").Get(context.Background(), "req-1", metav1.GetOptions{})
			require.NoError(t, err)
			if tc.want == 0 {
				assert.Equal(t, podcertctl.Skipped, e.Kind)
				assert.Nil(t, e.Decision)
				assert.Equal(t, tc.status, got.Status)
				return
			}
			assert.Equal(t, podcertctl.Decided, e.Kind)
			require.NotNil(t, e.Decision)
			assert.Equal(t, tc.want, e.Decision.Outcome)
			_, st := kubeapi.PodCertRequest(got)
			assert.Equal(t, tc.want, st.Outcome())
			require.Len(t, got.Status.Conditions, 1)
			assert.Equal(t, tc.wantReason, got.Status.Conditions[0].Reason)
			assert.Equal(t, tc.want == podcert.Issued, got.Status.CertificateChain != "")
			stats := ctl.Stats()
			assert.Equal(t, int64(1), stats.Issued+stats.Denied+stats.Failed)
		})
	}
}

func TestControllerSkipsOtherSigners(t *testing.T) {
	other := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-other"},
		Spec: spec(t, "example.com/other", "")}
	cs := fake.NewClientset(other)
	_, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1})
	e := next(t, events)
	assert.Nil(t, e.Decision)
	require.NoError(t, e.Err)
	got, err := cs.CertificatesV1().PodCertificateRequests("shop").Get(context.Background(), "req-other", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, got.Status.Conditions)
}

func TestControllerDecidesV1beta1(t *testing.T) {
	s := spec(t, signerName, "")
	pcr := &certificatesv1beta1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"},
		Spec: certificatesv1beta1.PodCertificateRequestSpec{SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID,
			ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: s.ServiceAccountUID, NodeName: s.NodeName, NodeUID: s.NodeUID,
			MaxExpirationSeconds: s.MaxExpirationSeconds, StubPKCS10Request: s.StubPKCS10Request}}
	cs := fake.NewClientset(pcr)
	signer := newSigner(t)
	_, events := run(t, cs, podcertctl.Config{Signer: signer, APIVersion: podcertctl.V1beta1})
	e := next(t, events)
	require.NoError(t, e.Err)
	require.NotNil(t, e.Decision)
	assert.Equal(t, podcert.Issued, e.Decision.Outcome)
	got, err := cs.CertificatesV1beta1().PodCertificateRequests("shop").Get(context.Background(), "req-1", metav1.GetOptions{})
	require.NoError(t, err)
	_, st := kubeapi.PodCertRequestV1beta1(got)
	assert.Equal(t, podcert.Issued, st.Outcome())
	bundle, err := cs.CertificatesV1beta1().ClusterTrustBundles().Get(context.Background(), "example.com:pods:primary-bundle", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, signerName, bundle.Spec.SignerName)
	assert.Equal(t, string(signer.TrustBundle()), bundle.Spec.TrustBundle)
}

func TestControllerRetriesConflicts(t *testing.T) {
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(pcr)
	conflicts := 1
	cs.PrependReactor("update", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}, "req-1", nil)
		}
		return false, nil, nil
	})
	ctl, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1})
	first := next(t, events)
	assert.Equal(t, podcertctl.Conflict, first.Kind)
	assert.True(t, first.Retry)
	assert.True(t, apierrors.IsConflict(first.Err))
	second := next(t, events)
	require.NoError(t, second.Err)
	require.NotNil(t, second.Decision)
	assert.Equal(t, podcert.Issued, second.Decision.Outcome)
	assert.Equal(t, podcertctl.Stats{Issued: 1, Conflicts: 1}, ctl.Stats())
}

func TestControllerUpdatesTrustBundle(t *testing.T) {
	stale := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:pods:primary-bundle"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: "old"}}
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(stale, pcr)
	signer := newSigner(t)
	ctl, events := run(t, cs, podcertctl.Config{Signer: signer, APIVersion: podcertctl.V1})
	e := nextEvent(t, events) // the bundle is published before any request is decided
	assert.Equal(t, podcertctl.TrustBundleWritten, e.Kind)
	next(t, events)
	assert.Equal(t, int64(1), ctl.Stats().Issued)
	got, err := cs.CertificatesV1().ClusterTrustBundles().Get(context.Background(), stale.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, string(signer.TrustBundle()), got.Spec.TrustBundle)
}

func TestAPIVersionDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      string
	}{
		{name: "v1 serves podcertificaterequests", want: podcertctl.V1, resources: []*metav1.APIResourceList{
			{GroupVersion: "certificates.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "certificatesigningrequests"}, {Name: "podcertificaterequests"}}}}},
		{name: "v1 without podcertificaterequests", want: podcertctl.V1beta1, resources: []*metav1.APIResourceList{
			{GroupVersion: "certificates.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "certificatesigningrequests"}}}}},
		{name: "no v1", want: podcertctl.V1beta1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			cs.Resources = tc.resources
			ctl, err := podcertctl.New(podcertctl.Config{Client: fakeClient(t, cs), Signer: newSigner(t)})
			require.NoError(t, err)
			got, err := ctl.APIVersion()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNewValidates(t *testing.T) {
	cs := fakeClient(t, fake.NewClientset())
	signer := newSigner(t)
	for _, tc := range []struct {
		name  string
		cfg   podcertctl.Config
		field string
	}{
		{name: "no client", cfg: podcertctl.Config{Signer: signer}, field: "Client"},
		{name: "no signer", cfg: podcertctl.Config{Client: cs}, field: "Signer"},
		{name: "unknown version", cfg: podcertctl.Config{Client: cs, Signer: signer, APIVersion: "v2"}, field: "APIVersion"},
		{name: "negative workers", cfg: podcertctl.Config{Client: cs, Signer: signer, Workers: -1}, field: "Workers"},
		{name: "negative retries", cfg: podcertctl.Config{Client: cs, Signer: signer, MaxRetries: -1}, field: "MaxRetries"},
		{name: "negative resync", cfg: podcertctl.Config{Client: cs, Signer: signer, Resync: -time.Second}, field: "Resync"},
		{name: "negative probe interval", cfg: podcertctl.Config{Client: cs, Signer: signer, CAProbeInterval: -time.Second}, field: "CAProbeInterval"},
		{name: "bundle name without the signer prefix", cfg: podcertctl.Config{Client: cs, Signer: signer, TrustBundleName: "pods-ca"}, field: "TrustBundleName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcertctl.New(tc.cfg)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, "podcertctl.Config."+tc.field, ce.Field)
			assert.Regexp(t, `^podcertctl: Config\.`+tc.field+` `, err.Error())
		})
	}
}

func TestDefaultTrustBundleName(t *testing.T) {
	assert.Equal(t, "example.com:pods:primary-bundle", podcertctl.DefaultTrustBundleName("example.com/pods"))
}

// A status the API server keeps failing to write is tried DefaultMaxRetries
// more times, then given up until the request changes.
func TestControllerGivesUpAfterMaxRetries(t *testing.T) {
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(pcr)
	cs.PrependReactor("update", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "status", nil, apierrors.NewInternalError(errors.New("etcd is down"))
	})
	ctl, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1})
	for i := range podcertctl.DefaultMaxRetries {
		e := next(t, events)
		require.Equal(t, podcertctl.Errored, e.Kind)
		require.True(t, e.Retry, "attempt %d", i+1)
		assert.True(t, apierrors.IsInternalError(e.Err))
	}
	last := next(t, events)
	assert.Equal(t, podcertctl.Errored, last.Kind)
	assert.False(t, last.Retry)
	assert.ErrorContains(t, last.Err, "etcd is down")
	assert.Equal(t, podcertctl.Stats{Errors: podcertctl.DefaultMaxRetries + 1}, ctl.Stats())
}
