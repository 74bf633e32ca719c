package testclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/testclock"
)

func TestClock(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0).UTC()
	c := testclock.New(t0)
	assert.Equal(t, t0, c.Now())
	c.Advance(time.Minute)
	assert.Equal(t, t0.Add(time.Minute), c.Now())
	c.Advance(-2 * time.Minute)
	assert.Equal(t, t0.Add(-time.Minute), c.Now())
	c.Set(t0)
	assert.Equal(t, t0, c.Now())

	// Read and moved at once (go test -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); c.Advance(time.Second) }()
		go func() { defer wg.Done(); _ = c.Now() }()
	}
	wg.Wait()
	assert.Equal(t, t0.Add(4*time.Second), c.Now())
}
