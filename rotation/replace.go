package rotation

import (
	"fmt"
	"slices"
	"time"
)

// CheckReplace reports whether next may replace s, the schedule a signer
// follows, at now (a ring file reloaded): nil when no token or
// certificate s signed or published could fail. It refuses, with a
// *[RuleError] whose SafeAt says when the replacement becomes safe:
//
//   - [ErrRetireEarly]: next withdraws at now, or retires before its wait
//     is over, a key whose tokens may be live (the signing key at now
//     until Policy.RetireWait after now; a previous key until RetireWait
//     after it stopped signing);
//   - [ErrStaging]: a key of next signs (at now, in place of s's signer,
//     or later) less than the propagation time after it was first served.
//
// A key's first-served time is served[ID] when the caller has recorded
// when it first published the key (or nil: none recorded); else its
// Published time in s when s publishes it at now (zero: from the start);
// else now, for a key s never served. The later of that and the key's
// Published time in next counts: a schedule that writes an earlier
// Published time than the signer really served the key from does not
// shorten the wait. The retirement wait is s's policy's (its tokens were
// signed under it); the propagation time the longer of the two policies'.
func (s *Schedule) CheckReplace(next *Schedule, now time.Time, served map[string]time.Time) error {
	cur, ns := s.At(now), next.At(now)
	wait := s.policy.RetireWait()
	for _, k := range cur.Keys {
		var until time.Time // the key stays published until then
		switch k.Role {
		case RoleSigning:
			until = now.Add(wait)
		case RolePrevious:
			until = k.Since.Add(wait)
		}
		if !until.After(now) {
			continue
		}
		j := next.index(k.ID)
		switch {
		case j < 0:
			return &RuleError{Rule: ErrRetireEarly, KeyID: k.ID, Index: -1, Reason: "the new schedule drops it before its last tokens expire", SafeAt: until}
		case !slices.ContainsFunc(ns.Keys, func(o KeyState) bool { return o.ID == k.ID }):
			field := FieldPublished
			if r := next.keys[j].Retired; !r.IsZero() && !r.After(now) {
				field = FieldRetired
			}
			return ruleError(ErrRetireEarly, next.keys[j], j, field, "the new schedule does not publish it now, before its last tokens expire", until)
		case !next.keys[j].Retired.IsZero() && next.keys[j].Retired.Before(until):
			return ruleError(ErrRetireEarly, next.keys[j], j, FieldRetired, stamp(next.keys[j].Retired)+" is before its last tokens expire", until)
		}
	}
	prop := max(s.policy.Propagation, next.policy.Propagation)
	for j, k := range next.keys {
		switching := k.Signs.After(now) || (k.ID == ns.Signer && k.ID != cur.Signer)
		if k.Signs.IsZero() || !switching {
			continue
		}
		first, ok := served[k.ID]
		if !ok {
			first = now
			if i := slices.IndexFunc(cur.Keys, func(o KeyState) bool { return o.ID == k.ID }); i >= 0 {
				first = cur.Keys[i].Published
			}
		}
		if k.Published.After(first) {
			first = k.Published
		}
		ready := first.Add(prop)
		if first.IsZero() || !later(k.Signs, now).Before(ready) {
			continue
		}
		return ruleError(ErrStaging, k, j, FieldSigns, fmt.Sprintf("it signs from %s, less than the propagation time %v after it was first served (%s)", stamp(later(k.Signs, now)), prop, stamp(first)), ready)
	}
	return nil
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
