// Package bench holds what throughput benchmarks share (tests only).
package bench

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Phase runs f n times on workers goroutines and returns the wall time.
// The first error ends that goroutine and is reported on b.
func Phase(b testing.TB, workers, n int, f func() error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := f(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
