package podcertctl_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// cachedRequests is how many requests BenchmarkControllerMemory caches.
const cachedRequests = 10_000

// BenchmarkControllerMemory reports the heap a controller holds with
// cachedRequests Issued PodCertificateRequests in its informer's cache (a
// fake clientset's): the heap in use after a garbage collection once the
// controller has looked at every request, less the heap in use before it
// started, in total (heap-MB) and per request (heap-B/request). Each
// request's certificate chain and CSR are its own bytes, as they are when
// decoded from an API server's answer. Run it with
//
//	go test -run '^$' -bench ControllerMemory -benchtime 1x ./podcert/podcertctl/
func BenchmarkControllerMemory(b *testing.B) {
	signer := newSigner(b)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req"}, Spec: spec(b, signerName, "")}
	req, _ := kubeapi.PodCertRequest(pcr)
	d, err := signer.Decide(&req)
	require.NoError(b, err)
	require.NoError(b, kubeapi.ApplyPodCertDecision(&d, pcr))
	for range b.N {
		heap := controllerHeap(b, signer, pcr)
		b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		b.ReportMetric(float64(heap)/cachedRequests, "heap-B/request")
	}
}

// controllerHeap runs a controller over cachedRequests copies of pcr and
// returns the heap it holds once it has looked at each.
func controllerHeap(b *testing.B, signer *podcert.Signer, pcr *certificatesv1.PodCertificateRequest) uint64 {
	b.Helper()
	cs := fake.NewClientset()
	for i := range cachedRequests {
		p := pcr.DeepCopy()
		p.Name, p.UID = fmt.Sprintf("req-%05d", i), types.UID(fmt.Sprintf("3c5e2f0a-4d1b-4c1e-9a7f-%012d", i))
		require.NoError(b, cs.Tracker().Add(p))
	}
	client := ownBytes{fakeClient(b, cs)}
	var looked atomic.Int64
	all := make(chan struct{})
	ctl, err := podcertctl.New(podcertctl.Config{Client: client, Signer: signer, APIVersion: podcertctl.V1, NoTrustBundle: true,
		Observe: func(e podcertctl.Event) {
			if e.Kind == podcertctl.Skipped && looked.Add(1) == cachedRequests {
				close(all)
			}
		}})
	require.NoError(b, err)
	before := heapInUse()
	b.ResetTimer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatal("the controller did not look at every request")
	}
	b.StopTimer()
	after := heapInUse()
	cancel()
	require.NoError(b, <-done)
	runtime.KeepAlive(cs)
	if after < before {
		return 0
	}
	return after - before
}

// heapInUse is the heap in use after a garbage collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// ownBytes is a client whose lists of requests give each request its own
// certificate chain and CSR, as decoding an API server's answer does: the
// fake clientset's copies share them with its store.
type ownBytes struct {
	podcertctl.Client
}

func (c ownBytes) RequestsV1(namespace string) podcertctl.Requests[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList] {
	return ownBytesRequests{c.Client.RequestsV1(namespace)}
}

type ownBytesRequests struct {
	podcertctl.Requests[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList]
}

func (r ownBytesRequests) List(ctx context.Context, opts metav1.ListOptions) (*certificatesv1.PodCertificateRequestList, error) {
	l, err := r.Requests.List(ctx, opts)
	if err != nil {
		return l, err
	}
	for i := range l.Items {
		p := &l.Items[i]
		p.Status.CertificateChain = strings.Clone(p.Status.CertificateChain)
		p.Spec.StubPKCS10Request = bytes.Clone(p.Spec.StubPKCS10Request)
	}
	return l, nil
}

// IsWatchListSemanticsUnSupported has the informer list, as the fake
// clientset asks (its watch holds a hundred events).
func (ownBytes) IsWatchListSemanticsUnSupported() bool { return true }
