package rotation_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/rotation"
)

// The policy of the tests: a key propagates in an hour, signs tokens of
// up to a day, and skew adds five minutes.
var (
	t0     = time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	start  = time.Unix(0, 0)
	policy = rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 5 * time.Minute}
	wait   = 24*time.Hour + 5*time.Minute
)

// rotating is a schedule in the middle of a rotation: a signs from the
// start until b takes over at t0 (b published an hour before), c is staged
// from t0, and a is retired once its tokens have expired.
func rotating() []rotation.Key {
	return []rotation.Key{
		{ID: "a", Signs: start, Retired: t0.Add(wait)},
		{ID: "b", Published: t0.Add(-time.Hour), Signs: t0},
		{ID: "c", Published: t0},
	}
}

// TestRules: every rule of the rotation, at its boundary: New's rules on
// a schedule, then those of replacing a schedule, of the next action and
// of the functions that change a schedule. Each refusal is a *RuleError
// naming the rule (errors.Is), the key, the field and the earliest safe
// time.
func TestRules(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	withKey := func(k rotation.Key) []rotation.Key { return append(rotating(), k) }
	replacedBy := func(keys []rotation.Key, served map[string]time.Time) func(*rotation.Schedule) error {
		return func(s *rotation.Schedule) error {
			next, err := rotation.New(policy, keys)
			if err != nil {
				return err
			}
			return s.CheckReplace(next, now, served)
		}
	}
	tests := []struct {
		name string
		keys []rotation.Key
		// then, when set, runs on the schedule New accepted.
		then func(*rotation.Schedule) error
		// wantRule nil: accepted.
		wantRule  error
		wantKey   string
		wantIndex int
		wantField string
		wantSafe  time.Time
	}{
		{name: "a rotation under way", keys: rotating()},
		{name: "one key signing from the start", keys: []rotation.Key{{ID: "a", Signs: start}}},

		// The keys.
		{name: "no key", keys: nil, wantRule: rotation.ErrNoSigner, wantIndex: -1},
		{name: "no key signs", keys: []rotation.Key{{ID: "a"}}, wantRule: rotation.ErrNoSigner, wantIndex: -1},
		{name: "an empty ID", keys: withKey(rotation.Key{}), wantRule: rotation.ErrKeyID, wantIndex: 3},
		{name: "an ID twice", keys: withKey(rotation.Key{ID: "b"}), wantRule: rotation.ErrKeyID, wantKey: "b", wantIndex: 3},
		{name: "MaxKeys keys", keys: manyKeys(rotation.MaxKeys)},
		{name: "one key more than MaxKeys", keys: manyKeys(rotation.MaxKeys + 1), wantRule: rotation.ErrTooManyKeys, wantIndex: -1},

		// Times in range and in order.
		{name: "a time before 1970", keys: []rotation.Key{{ID: "a", Signs: start.Add(-time.Nanosecond)}}, wantRule: rotation.ErrOrder, wantKey: "a", wantField: rotation.FieldSigns},
		{name: "a time after the year 9999", keys: withKey(rotation.Key{ID: "d", Published: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}),
			wantRule: rotation.ErrOrder, wantKey: "d", wantIndex: 3, wantField: rotation.FieldPublished},
		{name: "signing when published", keys: []rotation.Key{{ID: "a", Published: t0, Signs: t0}}},
		{name: "signing before published", keys: []rotation.Key{{ID: "a", Published: t0, Signs: t0.Add(-time.Nanosecond)}},
			wantRule: rotation.ErrOrder, wantKey: "a", wantField: rotation.FieldSigns, wantSafe: t0},
		{name: "retired when published", keys: withKey(rotation.Key{ID: "d", Published: t0, Retired: t0}),
			wantRule: rotation.ErrOrder, wantKey: "d", wantIndex: 3, wantField: rotation.FieldRetired, wantSafe: t0.Add(time.Nanosecond)},
		{name: "a staged key retired a nanosecond after it is published", keys: withKey(rotation.Key{ID: "d", Published: t0, Retired: t0.Add(time.Nanosecond)})},

		// Verify-only keys.
		{name: "a verify-only key, unlisted", keys: withKey(rotation.Key{ID: "legacy", VerifyOnly: true, Unlisted: true})},
		{name: "a verify-only key that signs", keys: withKey(rotation.Key{ID: "legacy", VerifyOnly: true, Signs: t0.Add(48 * time.Hour)}),
			wantRule: rotation.ErrVerifyOnly, wantKey: "legacy", wantIndex: 3, wantField: rotation.FieldSigns},
		{name: "an unlisted key that can sign", keys: withKey(rotation.Key{ID: "d", Unlisted: true}),
			wantRule: rotation.ErrVerifyOnly, wantKey: "d", wantIndex: 3},

		// One signer at a time.
		{name: "two keys signing at once", keys: []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Signs: start}},
			wantRule: rotation.ErrTwoSigners, wantKey: "b", wantIndex: 1, wantField: rotation.FieldSigns},

		// Staging.
		{name: "staged for exactly the propagation time", keys: withKey(rotation.Key{ID: "d", Published: t0, Signs: t0.Add(time.Hour)})[1:]},
		{name: "staged a nanosecond too short", keys: []rotation.Key{{ID: "b", Signs: start}, {ID: "d", Published: t0, Signs: t0.Add(time.Hour - time.Nanosecond)}},
			wantRule: rotation.ErrStaging, wantKey: "d", wantIndex: 1, wantField: rotation.FieldSigns, wantSafe: t0.Add(time.Hour)},
		{name: "the first signer is exempt", keys: []rotation.Key{{ID: "a", Published: t0, Signs: t0}}},
		{name: "a key published from the start is exempt", keys: []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Signs: t0}}},

		// Retirement.
		{name: "retired when its tokens have expired", keys: []rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait)}, {ID: "b", Signs: t0}}},
		{name: "retired a nanosecond before its tokens expire", keys: []rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait - time.Nanosecond)}, {ID: "b", Signs: t0}},
			wantRule: rotation.ErrRetireEarly, wantKey: "a", wantField: rotation.FieldRetired, wantSafe: t0.Add(wait)},
		{name: "the last signer retired", keys: []rotation.Key{{ID: "a", Signs: start, Retired: t0}},
			wantRule: rotation.ErrLastSigner, wantKey: "a", wantField: rotation.FieldRetired},

		// Replacing a schedule at now (t0 + 10m): b signs, a is previous, c
		// is staged.
		{name: "replaced by itself", keys: rotating(), then: replacedBy(rotating(), nil)},
		{name: "replaced without the staged key", keys: rotating(), then: replacedBy(rotating()[:2], nil)},
		{name: "the previous key withdrawn while its tokens live", keys: rotating(), then: replacedBy(rotating()[1:], nil),
			wantRule: rotation.ErrRetireEarly, wantKey: "a", wantIndex: -1, wantSafe: t0.Add(wait)},
		{name: "the signing key withdrawn", keys: rotating(), then: replacedBy([]rotation.Key{{ID: "a", Signs: start}}, nil),
			wantRule: rotation.ErrRetireEarly, wantKey: "b", wantIndex: -1, wantSafe: now.Add(wait)},
		{name: "the signing key published later by the new schedule", keys: rotating(),
			then:     replacedBy([]rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: now.Add(time.Hour), Signs: now.Add(2 * time.Hour)}}, nil),
			wantRule: rotation.ErrRetireEarly, wantKey: "b", wantIndex: 1, wantField: rotation.FieldPublished, wantSafe: now.Add(wait)},
		{name: "the staged key signs now, staged long enough", keys: rotating(),
			then: replacedBy([]rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait)}, {ID: "b", Published: t0.Add(-time.Hour), Signs: t0, Retired: now.Add(wait)}, {ID: "c", Published: t0.Add(-time.Hour), Signs: now}},
				map[string]time.Time{"c": t0.Add(-time.Hour)})},
		{name: "the staged key signs now, first served ten minutes ago", keys: rotating(),
			then: replacedBy([]rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait)}, {ID: "b", Published: t0.Add(-time.Hour), Signs: t0, Retired: now.Add(wait)}, {ID: "c", Published: t0.Add(-time.Hour), Signs: now}},
				map[string]time.Time{"c": t0}),
			wantRule: rotation.ErrStaging, wantKey: "c", wantIndex: 2, wantField: rotation.FieldSigns, wantSafe: t0.Add(time.Hour)},
		{name: "the staged key signs now, no record: its Published time in the running schedule counts", keys: rotating(),
			then:     replacedBy([]rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait)}, {ID: "b", Published: t0.Add(-time.Hour), Signs: t0, Retired: now.Add(wait)}, {ID: "c", Published: t0.Add(-time.Hour), Signs: now}}, nil),
			wantRule: rotation.ErrStaging, wantKey: "c", wantIndex: 2, wantField: rotation.FieldSigns, wantSafe: t0.Add(time.Hour)},
		{name: "an unknown key signs in half an hour, published yesterday by the new schedule", keys: rotating(),
			then:     replacedBy(append(rotating()[:2], rotation.Key{ID: "d", Published: t0.Add(-24 * time.Hour), Signs: now.Add(30 * time.Minute)}), nil),
			wantRule: rotation.ErrStaging, wantKey: "d", wantIndex: 2, wantField: rotation.FieldSigns, wantSafe: now.Add(time.Hour)},
		{name: "the signing key retired by a switch written in the past", keys: rotating(),
			then: replacedBy([]rotation.Key{{ID: "a", Signs: start, Retired: t0.Add(wait)}, {ID: "b", Published: t0.Add(-time.Hour), Signs: t0, Retired: t0.Add(5*time.Minute + wait)}, {ID: "c", Published: t0.Add(-time.Hour), Signs: t0.Add(5 * time.Minute)}},
				map[string]time.Time{"c": t0.Add(-time.Hour)}),
			wantRule: rotation.ErrRetireEarly, wantKey: "b", wantIndex: 1, wantField: rotation.FieldRetired, wantSafe: now.Add(wait)},

		// The next action.
		{name: "no key signs yet", keys: []rotation.Key{{ID: "a", Signs: now.Add(time.Hour)}},
			then:     func(s *rotation.Schedule) error { _, err := s.Next(nil, now, rotation.Cadence{}); return err },
			wantRule: rotation.ErrNoSigner, wantIndex: -1, wantSafe: now.Add(time.Hour)},
		{name: "two next keys", keys: []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: t0}, {ID: "c", Published: t0}},
			then:     func(s *rotation.Schedule) error { _, err := s.Next(nil, now, rotation.Cadence{}); return err },
			wantRule: rotation.ErrOneAtATime, wantKey: "c", wantIndex: 2},
		{name: "a next key while a previous key is published", keys: rotating(),
			then:     func(s *rotation.Schedule) error { _, err := s.Next(nil, now, rotation.Cadence{}); return err },
			wantRule: rotation.ErrOneAtATime, wantKey: "c", wantIndex: 2},
		{name: "a written switch shorter than the cadence's propagation", keys: []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: t0, Signs: t0.Add(2 * time.Hour)}},
			then: func(s *rotation.Schedule) error {
				_, err := s.Next([][]string{{"a", "b"}}, now, rotation.Cadence{Propagation: 24 * time.Hour})
				return err
			},
			wantRule: rotation.ErrStaging, wantKey: "b", wantIndex: 1, wantField: rotation.FieldSigns, wantSafe: t0.Add(24 * time.Hour)},

		// Changing a schedule.
		{name: "postponing an unknown key", keys: rotating(),
			then:     func(s *rotation.Schedule) error { _, err := s.Postpone("x", now); return err },
			wantRule: rotation.ErrKeyID, wantKey: "x", wantIndex: -1},
		{name: "postponing past the next switch", keys: []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: t0, Signs: t0.Add(time.Hour)}, {ID: "c", Published: t0, Signs: t0.Add(2 * time.Hour)}},
			then:     func(s *rotation.Schedule) error { _, err := s.Postpone("b", t0.Add(2*time.Hour)); return err },
			wantRule: rotation.ErrTwoSigners},
		{name: "applying a step to a key not in the schedule", keys: rotating(),
			then: func(s *rotation.Schedule) error {
				_, err := s.Apply(rotation.Action{Kind: rotation.SignNext, Next: "x", At: now}, "")
				return err
			},
			wantRule: rotation.ErrKeyID, wantKey: "x", wantIndex: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := rotation.New(policy, tt.keys)
			if tt.then != nil {
				require.NoError(t, err)
				err = tt.then(s)
			}
			if tt.wantRule == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantRule)
			var re *rotation.RuleError
			require.ErrorAs(t, err, &re)
			if tt.wantRule == rotation.ErrTwoSigners && tt.then != nil {
				return // reported by New, on the postponed schedule
			}
			assert.Equal(t, tt.wantKey, re.KeyID)
			assert.Equal(t, tt.wantIndex, re.Index)
			assert.Equal(t, tt.wantField, re.Field)
			assert.Equal(t, tt.wantSafe, re.SafeAt)
			assert.Equal(t, 1, strings.Count(err.Error(), "rotation: "), "the prefix once: %s", err)
			if !tt.wantSafe.IsZero() {
				assert.Contains(t, err.Error(), "(safe from "+tt.wantSafe.UTC().Format(time.RFC3339Nano)+")")
			}
			for _, other := range []error{rotation.ErrKeyID, rotation.ErrTooManyKeys, rotation.ErrNoSigner, rotation.ErrOrder, rotation.ErrVerifyOnly,
				rotation.ErrTwoSigners, rotation.ErrStaging, rotation.ErrRetireEarly, rotation.ErrLastSigner, rotation.ErrOneAtATime} {
				if other != tt.wantRule {
					assert.NotErrorIs(t, err, other, "one rule per error")
				}
			}
		})
	}
}

// manyKeys is a schedule of n keys: one signs, the others only verify.
func manyKeys(n int) []rotation.Key {
	keys := []rotation.Key{{ID: "k0", Signs: start}}
	for i := 1; i < n; i++ {
		keys = append(keys, rotation.Key{ID: "k" + strings.Repeat("x", i), VerifyOnly: true})
	}
	return keys
}

// TestPolicyRefused: a policy or cadence out of range is a
// *ksa.ConfigError naming its field; MaxDuration is accepted, a
// nanosecond more is not.
func TestPolicyRefused(t *testing.T) {
	keys := []rotation.Key{{ID: "a", Signs: start}}
	for _, tt := range []struct {
		name      string
		p         rotation.Policy
		c         rotation.Cadence
		wantField string // empty: accepted
	}{
		{name: "the test policy", p: policy},
		{name: "the longest durations", p: rotation.Policy{Propagation: rotation.MaxDuration, MaxLifetime: rotation.MaxDuration, Skew: rotation.MaxDuration}},
		{name: "no propagation", p: rotation.Policy{MaxLifetime: time.Hour}, wantField: "rotation.Policy.Propagation"},
		{name: "no lifetime", p: rotation.Policy{Propagation: time.Hour}, wantField: "rotation.Policy.MaxLifetime"},
		{name: "a negative skew", p: rotation.Policy{Propagation: time.Hour, MaxLifetime: time.Hour, Skew: -1}, wantField: "rotation.Policy.Skew"},
		{name: "a lifetime over the limit", p: rotation.Policy{Propagation: time.Hour, MaxLifetime: rotation.MaxDuration + 1}, wantField: "rotation.Policy.MaxLifetime"},
		{name: "a negative delay", p: policy, c: rotation.Cadence{Delay: -1}, wantField: "rotation.Cadence.Delay"},
		{name: "a period over the limit", p: policy, c: rotation.Cadence{Every: rotation.MaxDuration + 1}, wantField: "rotation.Cadence.Every"},
		{name: "a period exactly the whole rotation", p: policy, c: rotation.Cadence{Every: time.Hour + time.Minute + wait, Delay: time.Minute}},
		{name: "a period shorter than the whole rotation", p: policy, c: rotation.Cadence{Every: time.Hour + wait, Delay: time.Minute}, wantField: "rotation.Cadence.Every"},
		{name: "a period shorter than the cadence's propagation", p: policy, c: rotation.Cadence{Every: 2 * wait, Propagation: 2 * wait}, wantField: "rotation.Cadence.Every"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := rotation.New(tt.p, keys)
			if err == nil {
				_, err = s.Next(nil, t0, tt.c)
			}
			if tt.wantField == "" {
				require.NoError(t, err)
				return
			}
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, tt.wantField, ce.Field)
			assert.True(t, strings.HasPrefix(err.Error(), "rotation: "), err.Error())
			assert.False(t, errors.Is(err, rotation.ErrStaging))
		})
	}
}
