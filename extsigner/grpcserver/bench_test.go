package grpcserver_test

import (
	"context"
	"crypto"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/internal/bench"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// benchKeys are the keys benchmarked, with how many signatures make one
// block of the ratio benchmark: about 200 ms of the ring's work on all
// cores. Each block over the socket starts with its callers' requests
// filling the server and ends with them draining it, about a millisecond
// with the cores half idle; in blocks of 20 ms that ramp took 5 % off the
// socket's throughput, which is not what a busy signer sees.
var benchKeys = []struct {
	name, key string
	block     int
}{
	{jwks.ES256, "p256", 4000},
	{jwks.RS256, "rsa2048", 400},
}

// callers is how many goroutines call Sign over the socket at once, as
// concurrent TokenRequests do.
var callers = 4 * runtime.GOMAXPROCS(0)

// benchSigner is one key behind the three ways of signing compared: the
// bare signature (tokens.Minter.Sign, ksa's in-process minting), the ring
// in-process (claims checks, signature, self-check) and the ring over a
// Unix socket with the gRPC client kube-apiserver uses.
type benchSigner struct {
	ring   *extsigner.Ring
	minter *tokens.Minter
	tok    *tokens.Claims
	claims string
	client externaljwtv1.ExternalJWTSignerClient
}

func newBenchSigner(b *testing.B, signer crypto.Signer) *benchSigner {
	b.Helper()
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{primary(signer)}})
	if err != nil {
		b.Fatal(err)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: signer})
	if err != nil {
		b.Fatal(err)
	}
	c := testClaims(time.Now(), time.Hour)
	return &benchSigner{
		ring: ring, minter: minter, tok: c, claims: encodeClaims(c),
		client: externaljwtv1.NewExternalJWTSignerClient(serve(b, grpcserver.Config{Ring: ring})),
	}
}

func (s *benchSigner) minted(ctx context.Context) error {
	_, err := s.minter.Sign(ctx, s.tok)
	return err
}

func (s *benchSigner) inProcess(ctx context.Context) error {
	_, err := s.ring.Sign(ctx, s.claims)
	return err
}

func (s *benchSigner) socket(ctx context.Context) error {
	_, err := s.client.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: s.claims})
	return err
}

// BenchmarkSign measures each way of signing alone, with concurrent
// callers: ns/op is wall time per signature on all cores, B/op and
// allocs/op the whole process's (client included, for the socket).
func BenchmarkSign(b *testing.B) {
	for _, bk := range benchKeys {
		s := newBenchSigner(b, key(bk.key))
		for _, way := range []struct {
			name string
			f    func(context.Context) error
			par  int
		}{{"minter", s.minted, 1}, {"ring", s.inProcess, 1}, {"socket", s.socket, callers / runtime.GOMAXPROCS(0)}} {
			b.Run(bk.name+"/"+way.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(way.par)
				ctx := b.Context()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := way.f(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkSignThroughput compares the throughput of Sign over the socket
// with in-process signing of the same key in the same run: it alternates
// blocks of each (minter, ring, socket; GOMAXPROCS goroutines in process,
// `callers` over the socket) so that other load on the machine weighs on
// all three alike, and reports signatures per second of each, the ratios
// socket/minter and socket/ring, and the socket's p50 and p99 latency per
// call (from a histogram of every call).
func BenchmarkSignThroughput(b *testing.B) {
	for _, bk := range benchKeys {
		s := newBenchSigner(b, key(bk.key))
		b.Run(bk.name, func(b *testing.B) {
			ctx := b.Context()
			procs := runtime.GOMAXPROCS(0)
			var hist histogram
			timed := func(ctx context.Context) error {
				start := time.Now()
				err := s.socket(ctx)
				hist.record(time.Since(start))
				return err
			}
			var minterT, ringT, socketT time.Duration
			ops := 0
			for i := 0; ops < b.N; i++ {
				// Rotate the order so that none always runs first.
				for j := range 3 {
					switch (i + j) % 3 {
					case 0:
						minterT += bench.Phase(b, procs, bk.block, func() error { return s.minted(ctx) })
					case 1:
						ringT += bench.Phase(b, procs, bk.block, func() error { return s.inProcess(ctx) })
					case 2:
						socketT += bench.Phase(b, callers, bk.block, func() error { return timed(ctx) })
					}
				}
				ops += bk.block
			}
			rate := func(d time.Duration) float64 { return float64(ops) / d.Seconds() }
			b.ReportMetric(float64(socketT.Nanoseconds())/float64(ops), "ns/op")
			b.ReportMetric(rate(minterT), "minter-sig/s")
			b.ReportMetric(rate(ringT), "ring-sig/s")
			b.ReportMetric(rate(socketT), "socket-sig/s")
			b.ReportMetric(rate(socketT)/rate(minterT), "socket/minter")
			b.ReportMetric(rate(socketT)/rate(ringT), "socket/ring")
			b.ReportMetric(float64(hist.quantile(0.50))/1e3, "p50-µs")
			b.ReportMetric(float64(hist.quantile(0.99))/1e3, "p99-µs")
		})
	}
}

// histogram counts durations in buckets 1/16 of a power of two wide (a
// quantile is off by at most 1/16), from 1 ns to about 4.5 minutes.
type histogram struct {
	counts [38 * 16]atomic.Int64
}

func bucket(d time.Duration) int {
	n := uint64(max(d, 1))
	exp := bits.Len64(n) - 1 // 2^exp <= n
	sub := 0
	if exp >= 4 {
		sub = int(n>>(exp-4)) & 15
	} else {
		sub = int(n<<(4-exp)) & 15
	}
	return min(exp*16+sub, 38*16-1)
}

func (h *histogram) record(d time.Duration) { h.counts[bucket(d)].Add(1) }

// quantile returns the upper bound of the bucket holding quantile q.
func (h *histogram) quantile(q float64) time.Duration {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	want := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= want && seen > 0 {
			exp, sub := i/16, i%16
			return time.Duration(float64(uint64(1)<<exp) * (1 + float64(sub+1)/16))
		}
	}
	return 0
}

func TestHistogram(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, q := range []float64{0.5, 0.99} {
		got := h.quantile(q)
		want := time.Duration(q*1000) * time.Microsecond
		if got < want || float64(got) > float64(want)*(1+1.0/16)+1 {
			t.Errorf("quantile %v: %v, want %v within 1/16", q, got, want)
		}
	}
}
