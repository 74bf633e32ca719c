package ksaprom_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/tokens"
)

// BenchmarkObserve is what the hook adds to each validation (a few tens of
// microseconds for ES256, see tokens' benchmarks).
func BenchmarkObserve(b *testing.B) {
	m, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	events := map[string]tokens.ValidationEvent{
		"valid":   {WarnAfter: true, Duration: 40 * time.Microsecond},
		"refused": {Err: tokens.ErrBadSignature, Reason: tokens.ErrBadSignature, Duration: 40 * time.Microsecond},
	}
	for name, ev := range events {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					m.Observe(ev)
				}
			})
		})
	}
}
