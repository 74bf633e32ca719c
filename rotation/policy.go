package rotation

import (
	"fmt"
	"time"

	"github.com/ksa-go/ksa"
)

// Limits of a schedule.
const (
	// MaxKeys is the most keys a schedule holds, verify-only keys
	// included.
	MaxKeys = 64
	// MaxDuration bounds every duration of a [Policy] and a [Cadence]:
	// 2^32 seconds (about 136 years), kube-apiserver's bound on a token's
	// lifetime.
	MaxDuration = (1 << 32) * time.Second
)

// The range of a key's times: from the Unix epoch to the end of the year
// 9999 (what RFC 3339 writes), so that no sum of times and durations
// overflows.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// Policy is what a rotation waits for. It has no defaults: each user
// derives it from its own settings (see the package documentation).
type Policy struct {
	// Propagation is the least time between publishing a key and its
	// first signature, so that every verifier has fetched it. Required:
	// more than zero.
	Propagation time.Duration
	// MaxLifetime is the longest lifetime of a token or certificate a key
	// signs. Required: more than zero.
	MaxLifetime time.Duration
	// Skew is added to MaxLifetime before a key that stopped signing is
	// retired: clock skew between signer and verifiers, a validator's
	// leeway. Zero: none.
	Skew time.Duration
}

// Check returns a *ksa.ConfigError for a policy [New] refuses: a
// Propagation or MaxLifetime that is not positive, a negative Skew, any
// duration over MaxDuration.
func (p Policy) Check() error {
	for _, f := range []struct {
		name     string
		d        time.Duration
		positive bool
	}{{"Propagation", p.Propagation, true}, {"MaxLifetime", p.MaxLifetime, true}, {"Skew", p.Skew, false}} {
		if err := checkDuration("rotation.Policy."+f.name, f.d, f.positive); err != nil {
			return err
		}
	}
	return nil
}

// checkDuration refuses a duration out of range.
func checkDuration(field string, d time.Duration, positive bool) error {
	switch {
	case positive && d <= 0:
		return &ksa.ConfigError{Field: field, Reason: fmt.Sprintf("%v is not positive", d)}
	case d < 0:
		return &ksa.ConfigError{Field: field, Reason: fmt.Sprintf("%v is negative", d)}
	case d > MaxDuration:
		return &ksa.ConfigError{Field: field, Reason: fmt.Sprintf("%v is more than 2^32 seconds", d)}
	}
	return nil
}

// RetireWait is how long after a key stopped signing every token or
// certificate it signed has expired: MaxLifetime plus Skew. A key that
// signed is retired no sooner after the next key took over.
func (p Policy) RetireWait() time.Duration { return p.MaxLifetime + p.Skew }

// Cadence is how [Schedule.Next] moves a rotation that no schedule writes
// in advance. Its zero value follows the schedule alone: it repairs the
// copies, and never makes a key or a switch.
type Cadence struct {
	// Every is how long a key signs before the next key is made: the
	// rotation period. Zero: never. Otherwise it must cover the whole
	// rotation: the propagation, Delay and the retirement wait.
	Every time.Duration
	// Delay is how long after SignNext the next key signs: the time every
	// signer takes to read the changed schedule. Zero: at once.
	Delay time.Duration
	// Propagation, when longer than the policy's, is the least time
	// between the copies getting the next key and its first signature (a
	// store's cache). Zero: the policy's.
	Propagation time.Duration
}

// check refuses a cadence out of range, or whose Every is shorter than the
// whole rotation under p.
func (c Cadence) check(p Policy) error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Every", c.Every}, {"Delay", c.Delay}, {"Propagation", c.Propagation}} {
		if err := checkDuration("rotation.Cadence."+f.name, f.d, false); err != nil {
			return err
		}
	}
	whole := minTime.Add(max(p.Propagation, c.Propagation)).Add(c.Delay).Add(p.RetireWait())
	if c.Every > 0 && minTime.Add(c.Every).Before(whole) {
		return &ksa.ConfigError{Field: "rotation.Cadence.Every", Reason: fmt.Sprintf("%v is shorter than the whole rotation (%v: propagation, delay, then the retirement wait)", c.Every, whole.Sub(minTime))}
	}
	return nil
}
