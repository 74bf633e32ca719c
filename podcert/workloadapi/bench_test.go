package workloadapi_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// streams opens n FetchX509SVID streams, each on its own connection, and
// receives their first answer.
func (e *env) streams(n int) []grpc.ServerStreamingClient[workload.X509SVIDResponse] {
	e.t.Helper()
	out := make([]grpc.ServerStreamingClient[workload.X509SVIDResponse], n)
	for i := range out {
		out[i] = e.svids()
		_, err := out[i].Recv()
		require.NoError(e.t, err)
	}
	return out
}

// rotate mounts a new certificate and returns when every stream received
// it, and how long that took from the write.
func rotate(e *env, bundle []byte, streams []grpc.ServerStreamingClient[workload.X509SVIDResponse], update bool) (time.Duration, error) {
	start := time.Now()
	e.write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": e.ca.TrustBundle()})
	if update {
		if err := e.srv.Update(); err != nil {
			return 0, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(streams))
	for i, s := range streams {
		wg.Go(func() { _, errs[i] = s.Recv() })
	}
	wg.Wait()
	return time.Since(start), errorsJoin(errs)
}

func errorsJoin(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkRotation measures the time from the kubelet's swap of the
// volume to the new certificate's arrival at every connected client,
// through the file event (Watch), with 1 and 100 clients on connections
// of their own: p50 and p99 over b.N rotations (ns/op is their mean).
// Certificates are issued before the timer runs.
func BenchmarkRotation(b *testing.B) {
	for _, clients := range []int{1, 100} {
		b.Run(strconv.Itoa(clients)+"-clients", func(b *testing.B) {
			e := newEnv(b, true, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = e.srv.Watch(ctx) }()
			streams := e.streams(clients)
			bundles := make([][]byte, b.N)
			for i := range bundles {
				var err error
				bundles[i], err = e.ca.Issue(pod)
				require.NoError(b, err)
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				d, err := rotate(e, bundles[i], streams, false)
				require.NoError(b, err)
				took = append(took, d)
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds()), "p99-µs")
		})
	}
}

// TestNoGrowthAcrossRotations: after 300 rotations to 10 clients, the
// live heap is what it was after the first 100 (within 1 MiB): nothing
// of a rotation is kept once the next one is served.
func TestNoGrowthAcrossRotations(t *testing.T) {
	if testing.Short() {
		t.Skip("300 rotations")
	}
	e := newEnv(t, true, nil)
	streams := e.streams(10)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var after100 uint64
	for i := range 300 {
		bundle, err := e.ca.Issue(pod)
		require.NoError(t, err)
		_, err = rotate(e, bundle, streams, true)
		require.NoError(t, err)
		if i == 99 {
			after100 = heap()
		}
	}
	after300 := heap()
	t.Logf("live heap after 100 rotations %d bytes, after 300 %d", after100, after300)
	require.Less(t, int64(after300)-int64(after100), int64(1<<20))
}
