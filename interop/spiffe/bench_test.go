package spiffe

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	gospiffe "github.com/spiffe/go-spiffe/v2/workloadapi"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/podcert/podcerttest"
)

// BenchmarkRotationToClients measures the time from the kubelet's swap of
// a pod's volume to the new certificate in every go-spiffe X509Source
// connected to the pod's sidecar (each on a connection of its own), with
// 1 and 100 of them: the file event, the server's update, the streams,
// go-spiffe's parsing. p50 and p99 over b.N rotations (ns/op is their
// mean); certificates are issued before the timer starts.
func BenchmarkRotationToClients(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(strconv.Itoa(n)+"-clients", func(b *testing.B) {
			ca, err := podcerttest.NewSigner(podcerttest.Config{})
			require.NoError(b, err)
			who := podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"}
			p := newPod(b, ca, who)
			sources := make([]*gospiffe.X509Source, n)
			for i := range sources {
				sources[i] = p.source(context.Background())
			}
			bundles := make([][]byte, b.N)
			for i := range bundles {
				bundles[i], err = ca.Issue(who)
				require.NoError(b, err)
			}
			took := make([]time.Duration, 0, b.N)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				require.NoError(b, p.mount.Write(map[string][]byte{"credentialbundle.pem": bundles[i], "ca.pem": ca.TrustBundle()}))
				var wg sync.WaitGroup
				for _, src := range sources {
					wg.Go(func() {
						if err := src.WaitUntilUpdated(ctx); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds()), "p99-µs")
		})
	}
}
