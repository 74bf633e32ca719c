package rotation

import (
	"fmt"
	"slices"
	"time"
)

// Key is a key (or CA) of a schedule and the times of its life. A zero
// time means: Published, from the start (before any time the schedule
// names); Signs, the key does not sign (yet); Retired, never.
type Key struct {
	// ID names the key: a key ID, a certificate's fingerprint. Required,
	// unique in the schedule.
	ID string
	// Published is when the key is first published.
	Published time.Time
	// Signs is when the key starts signing; it signs until the next key's
	// Signs. A key that signs from the start has a Signs time before the
	// schedule's other times, such as time.Unix(0, 0).
	Signs time.Time
	// Retired is when the key is withdrawn.
	Retired time.Time
	// VerifyOnly is a key that never signs (a legacy key published for the
	// tokens others signed): it has no Signs time, and no rule waits for
	// its tokens.
	VerifyOnly bool
	// Unlisted is a verify-only key published where the schedule is
	// served but not in the copies Next checks (kube-apiserver's own keys,
	// out of discovery). Only verify-only keys may be unlisted.
	Unlisted bool
}

// Schedule is a checked schedule: keys with their times and a policy,
// obeying every rule of the rotation (see [New]). It is immutable; the
// functions that change it return another.
type Schedule struct {
	policy Policy
	keys   []Key
	// signers are the indexes of the keys that sign, in Signs order.
	signers []int
}

// New checks a schedule and returns it. The keys keep their order (the
// order of the published key sets). It refuses, with a *[RuleError]
// naming the key, its time and the earliest safe one, a schedule that
// breaks one of the rules:
//
//   - at most MaxKeys keys ([ErrTooManyKeys]), with non-empty, unique IDs
//     ([ErrKeyID]);
//   - each time from 1970 to the year 9999, and in order: a key signs at
//     or after it is published, and is retired after it is published
//     ([ErrOrder]);
//   - a verify-only key never signs, and only a verify-only key is
//     unlisted ([ErrVerifyOnly]);
//   - some key signs ([ErrNoSigner]), and no two start at the same
//     instant ([ErrTwoSigners]);
//   - a key that takes over from another signs at least
//     Policy.Propagation after it is published ([ErrStaging]); the first
//     key that signs, and a key published from the start, are exempt: the
//     schedule knows no earlier time for them;
//   - a key that signed is retired no sooner than Policy.RetireWait after
//     the next key took over ([ErrRetireEarly]), and the last key that
//     signs is never retired ([ErrLastSigner]).
//
// The policy is checked first (a *ksa.ConfigError).
func New(p Policy, keys []Key) (*Schedule, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(keys) > MaxKeys {
		return nil, &RuleError{Rule: ErrTooManyKeys, Index: -1, Reason: fmt.Sprintf("%d keys, more than %d", len(keys), MaxKeys)}
	}
	s := &Schedule{policy: p, keys: slices.Clone(keys)}
	for i, k := range s.keys {
		if err := checkKey(s.keys[:i], k, i); err != nil {
			return nil, err
		}
		if !k.Signs.IsZero() {
			s.signers = append(s.signers, i)
		}
	}
	if len(s.signers) == 0 {
		return nil, &RuleError{Rule: ErrNoSigner, Index: -1, Reason: "no key has a Signs time"}
	}
	slices.SortStableFunc(s.signers, func(a, b int) int { return s.keys[a].Signs.Compare(s.keys[b].Signs) })
	wait := p.RetireWait()
	for n, i := range s.signers {
		k := s.keys[i]
		if n > 0 {
			prev := s.signers[n-1]
			if k.Signs.Equal(s.keys[prev].Signs) {
				return nil, ruleError(ErrTwoSigners, k, i, FieldSigns, fmt.Sprintf("%s is also the Signs time of keys[%d]; give one a later time", stamp(k.Signs), prev), time.Time{})
			}
			if ready := k.Published.Add(p.Propagation); !k.Published.IsZero() && k.Signs.Before(ready) {
				return nil, ruleError(ErrStaging, k, i, FieldSigns, fmt.Sprintf("%s is less than the propagation time %v after it is published (%s)", stamp(k.Signs), p.Propagation, stamp(k.Published)), ready)
			}
		}
		if k.Retired.IsZero() {
			continue
		}
		if n == len(s.signers)-1 {
			return nil, ruleError(ErrLastSigner, k, i, FieldRetired, "no key would sign after it; give the next key a Signs time first", time.Time{})
		}
		next := s.keys[s.signers[n+1]].Signs
		if safe := next.Add(wait); k.Retired.Before(safe) {
			return nil, ruleError(ErrRetireEarly, k, i, FieldRetired, fmt.Sprintf("%s is less than the retirement wait %v after keys[%d] takes over (%s)", stamp(k.Retired), wait, s.signers[n+1], stamp(next)), safe)
		}
	}
	return s, nil
}

// checkKey checks the key at index i against the keys before it and its
// own times.
func checkKey(before []Key, k Key, i int) error {
	if k.ID == "" {
		return ruleError(ErrKeyID, k, i, "", "empty", time.Time{})
	}
	if j := slices.IndexFunc(before, func(o Key) bool { return o.ID == k.ID }); j >= 0 {
		return ruleError(ErrKeyID, k, i, "", fmt.Sprintf("also the ID of keys[%d]", j), time.Time{})
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{FieldPublished, k.Published}, {FieldSigns, k.Signs}, {FieldRetired, k.Retired}} {
		if !f.t.IsZero() && (f.t.Before(minTime) || f.t.After(maxTime)) {
			return ruleError(ErrOrder, k, i, f.name, stamp(f.t)+" is not between 1970 and the year 9999", time.Time{})
		}
	}
	switch {
	case !k.Published.IsZero() && !k.Retired.IsZero() && !k.Retired.After(k.Published):
		return ruleError(ErrOrder, k, i, FieldRetired, fmt.Sprintf("%s is not after it is published (%s)", stamp(k.Retired), stamp(k.Published)), k.Published.Add(time.Nanosecond))
	case !k.Signs.IsZero() && k.VerifyOnly:
		return ruleError(ErrVerifyOnly, k, i, FieldSigns, "is set on a verify-only key", time.Time{})
	case !k.Published.IsZero() && !k.Signs.IsZero() && k.Signs.Before(k.Published):
		return ruleError(ErrOrder, k, i, FieldSigns, fmt.Sprintf("%s is before it is published (%s)", stamp(k.Signs), stamp(k.Published)), k.Published)
	case k.Unlisted && !k.VerifyOnly:
		return ruleError(ErrVerifyOnly, k, i, "", "unlisted, and it can sign: every copy must hold a key that may sign", time.Time{})
	}
	return nil
}

// ruleError reports key k, at index i, breaking rule.
func ruleError(rule error, k Key, i int, field, reason string, safe time.Time) *RuleError {
	return &RuleError{Rule: rule, KeyID: k.ID, Index: i, Field: field, Reason: reason, SafeAt: safe}
}

// Policy returns the schedule's policy.
func (s *Schedule) Policy() Policy { return s.policy }

// Keys returns the schedule's keys, in order. The slice is the caller's.
func (s *Schedule) Keys() []Key { return slices.Clone(s.keys) }

// Key returns the key with id, and whether the schedule has it.
func (s *Schedule) Key(id string) (Key, bool) {
	if i := s.index(id); i >= 0 {
		return s.keys[i], true
	}
	return Key{}, false
}

// index returns the position of the key with id, or -1.
func (s *Schedule) index(id string) int {
	return slices.IndexFunc(s.keys, func(k Key) bool { return k.ID == id })
}

// Postpone returns the schedule with key id signing from signs, when that
// is later than its Signs time (a switch only ever moves later; a key that
// does not sign stays as it is), and the key it takes over from retired no
// sooner than Policy.RetireWait after signs, when its retirement is
// written. The result is checked as New checks a schedule; s is unchanged.
// An id not in the schedule is refused with [ErrKeyID]. Postpone a switch
// still to come: moving one already made stops its key signing again.
func (s *Schedule) Postpone(id string, signs time.Time) (*Schedule, error) {
	i := s.index(id)
	if i < 0 {
		return nil, &RuleError{Rule: ErrKeyID, KeyID: id, Index: -1, Reason: "not in the schedule"}
	}
	keys := slices.Clone(s.keys)
	s.postpone(keys, i, signs)
	return New(s.policy, keys)
}

// postpone moves the Signs time of keys[i] to signs, if later, and the
// retirement of the key it takes over from with it.
func (s *Schedule) postpone(keys []Key, i int, signs time.Time) {
	k := &keys[i]
	if k.Signs.IsZero() || !signs.After(k.Signs) {
		return
	}
	if n := slices.Index(s.signers, i); n > 0 {
		prev := &keys[s.signers[n-1]]
		if safe := signs.Add(s.policy.RetireWait()); !prev.Retired.IsZero() && prev.Retired.Before(safe) {
			prev.Retired = safe
		}
	}
	k.Signs = signs
}
