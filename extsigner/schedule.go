package extsigner

import (
	"crypto"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
)

// ScheduledKey is a key of a ring that follows a schedule
// (RingConfig.Schedule): the times at which it is published, becomes the
// primary and is retired. At any instant t the ring's keys are those
// published at t (Published at or before t, Retired after t), in schedule
// order, and the primary is the key whose Primary is the latest at or
// before t; its role at t follows:
//
//   - verify-only: no Signer;
//   - primary: the latest Primary at or before t;
//   - previous: a Primary before the primary's;
//   - staged: no Primary yet (or none at all).
//
// A schedule is refused unless every transition it writes is safe: no two
// keys become primary at the same time; a key that takes over from another
// is published at least MinStaging before (so that every kube-apiserver
// and relying party knows it); a key that signed is retired no sooner than
// MaxTokenLifetime, MaxClockSkew, tokens.DefaultLeeway and a second after
// the next primary took over (when every token it signed has expired),
// and the last primary is never retired; times come in order (published,
// primary, retired). The data timestamp FetchKeys answers is the latest
// Published or Retired time at or before t (the Unix epoch before any):
// the same on every replica given the same schedule.
type ScheduledKey struct {
	// Key is the published key, as for RingKey.Key: with a Signer, a nil
	// Public means Signer.Public() and an empty KeyID means jwks.KeyID.
	// ExcludeFromDiscovery only for a key without Signer.
	Key jwks.Key
	// Signer signs with the key; nil for a verify-only key, which is never
	// the primary.
	Signer crypto.Signer
	// Published is when the key is first published; zero means from the
	// start (before any time the schedule names).
	Published time.Time
	// Primary is when the key starts signing: it signs until the next
	// Primary of the schedule. Zero: it never signs. A key that signs from
	// the start has time.Unix(0, 0).
	Primary time.Time
	// Retired is when the key is withdrawn; zero means never.
	Retired time.Time
}

// epoch is the data timestamp of a schedule before any of its times.
var epoch = time.Unix(0, 0).UTC()

// schedule is a checked schedule.
type schedule struct {
	keys []scheduled
	// primaries are the indexes of the keys that sign, in Primary order.
	primaries []int
}

type scheduled struct {
	ScheduledKey
	sk *signingKey
}

// keyTimes are the times of one key of a schedule, and whether it can sign.
type keyTimes struct {
	published, primary, retired time.Time
	signs                       bool
}

// timeField names the times of a key, for errors.
type timeField int

const (
	fieldPublished timeField = iota
	fieldPrimary
	fieldRetired
)

// timesProblem is a schedule that a rule refuses: the key at index, the
// time at fault, and why (with the fix).
type timesProblem struct {
	index  int
	field  timeField
	reason string
}

// checkTimes checks the times of a schedule against the rotation's rules
// (see ScheduledKey) with the ring's settings; now is not involved.
func checkTimes(keys []keyTimes, st settings) *timesProblem {
	var primaries []int
	for i, k := range keys {
		if !k.retired.IsZero() && !k.published.IsZero() && !k.retired.After(k.published) {
			return &timesProblem{i, fieldRetired, fmt.Sprintf("%s is not after the key is published (%s): retire it later, or publish it earlier", stamp(k.retired), stamp(k.published))}
		}
		if k.primary.IsZero() {
			continue
		}
		if !k.signs {
			return &timesProblem{i, fieldPrimary, "is set on a key that cannot sign (a verify-only key): remove it, or give the key a signer"}
		}
		if !k.published.IsZero() && k.primary.Before(k.published) {
			return &timesProblem{i, fieldPrimary, fmt.Sprintf("%s is before the key is published (%s): a key must be published before it signs", stamp(k.primary), stamp(k.published))}
		}
		primaries = append(primaries, i)
	}
	slices.SortStableFunc(primaries, func(a, b int) int { return keys[a].primary.Compare(keys[b].primary) })
	wait := st.retireWait()
	for n, i := range primaries {
		k := keys[i]
		if n > 0 {
			prev := primaries[n-1]
			if k.primary.Equal(keys[prev].primary) {
				return &timesProblem{i, fieldPrimary, fmt.Sprintf("%s is also the primary time of keys[%d]: two keys cannot start signing at once; give one a later time", stamp(k.primary), prev)}
			}
			if !k.published.IsZero() && k.primary.Before(k.published.Add(st.minStaging)) {
				return &timesProblem{i, fieldPrimary, fmt.Sprintf("%s is less than the minimum staging time (%v) after the key is published (%s): every kube-apiserver and relying party must know a key before it signs; make it primary at %s or later, or publish it earlier",
					stamp(k.primary), st.minStaging, stamp(k.published), stamp(k.published.Add(st.minStaging)))}
			}
		}
		if k.retired.IsZero() {
			continue
		}
		if n == len(primaries)-1 {
			return &timesProblem{i, fieldRetired, "is set on the last key that signs: no key would sign after it; schedule the next primary first, and retire this key once the tokens it signed have expired"}
		}
		end := keys[primaries[n+1]].primary
		if safe := end.Add(wait); k.retired.Before(safe) {
			return &timesProblem{i, fieldRetired, fmt.Sprintf("%s is before every token the key signed has expired: it signs until keys[%d] takes over at %s, and tokens live up to %v more (the longest token lifetime, clock skew and leeway); retire it at %s or later",
				stamp(k.retired), primaries[n+1], stamp(end), wait, stamp(safe))}
		}
	}
	return nil
}

// stamp formats a time of a schedule in messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newSchedule checks a schedule: its keys, its times, and that it names a
// primary at now. Errors are *ksa.ConfigError, or match ErrDuplicateKeyID
// or ErrTooManyKeys.
func newSchedule(keys []ScheduledKey, st settings, now time.Time) (*schedule, error) {
	if len(keys) == 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: "holds no key"}
	}
	if len(keys) > MaxKeys {
		return nil, keyError(ErrTooManyKeys, "", fmt.Sprintf("%d keys, more than %d", len(keys), MaxKeys), nil)
	}
	sc := &schedule{keys: make([]scheduled, 0, len(keys))}
	times := make([]keyTimes, len(keys))
	for i, k := range keys {
		key, sk, err := checkKey(k.Key, k.Signer, k.Signer == nil)
		if err != nil {
			return nil, &ksa.ConfigError{Field: fmt.Sprintf("extsigner.RingConfig.Schedule[%d]", i), Reason: "is refused", Err: err}
		}
		k.Key = key
		for j, o := range sc.keys {
			if o.Key.KeyID == key.KeyID {
				return nil, keyError(ErrDuplicateKeyID, key.KeyID, fmt.Sprintf("appears twice (Schedule[%d] and [%d])", j, i), nil)
			}
			if eq, ok := o.Key.Public.(interface{ Equal(crypto.PublicKey) bool }); ok && eq.Equal(key.Public) {
				return nil, keyError(ErrDuplicateKeyID, key.KeyID, fmt.Sprintf("is the public key of Schedule[%d] (%q) again", j, o.Key.KeyID), nil)
			}
		}
		sc.keys = append(sc.keys, scheduled{ScheduledKey: k, sk: sk})
		times[i] = keyTimes{published: k.Published, primary: k.Primary, retired: k.Retired, signs: k.Signer != nil}
		if !k.Primary.IsZero() {
			sc.primaries = append(sc.primaries, i)
		}
	}
	if p := checkTimes(times, st); p != nil {
		return nil, &ksa.ConfigError{Field: fmt.Sprintf("extsigner.RingConfig.Schedule[%d].%s", p.index, [...]string{"Published", "Primary", "Retired"}[p.field]), Reason: p.reason}
	}
	slices.SortStableFunc(sc.primaries, func(a, b int) int { return sc.keys[a].Primary.Compare(sc.keys[b].Primary) })
	if sc.primaryAt(now) < 0 {
		reason := "names no key that signs (no Primary time)"
		if len(sc.primaries) > 0 {
			reason = fmt.Sprintf("names no primary at %s: the first key signs at %s; give a key a primary time at or before now", stamp(now), stamp(sc.keys[sc.primaries[0]].Primary))
		}
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: reason}
	}
	return sc, nil
}

// primaryAt returns the index of the key that is primary at t, or -1.
func (sc *schedule) primaryAt(t time.Time) int {
	p := -1
	for _, i := range sc.primaries {
		if sc.keys[i].Primary.After(t) {
			break
		}
		p = i
	}
	return p
}

// at is the ring's state at t.
func (sc *schedule) at(t time.Time) *ringState {
	s := &ringState{sched: sc, stamp: epoch}
	p := sc.primaryAt(t)
	// successor[i] is when the key after primary i took over.
	var next time.Time
	consider := func(x time.Time) {
		if x.After(t) && (next.IsZero() || x.Before(next)) {
			next = x
		}
	}
	for i, k := range sc.keys {
		consider(k.Published)
		consider(k.Primary)
		consider(k.Retired)
		for _, x := range []time.Time{k.Published, k.Retired} {
			if !x.IsZero() && !x.After(t) && x.After(s.stamp) {
				s.stamp = x
			}
		}
		if (!k.Published.IsZero() && k.Published.After(t)) || (!k.Retired.IsZero() && !k.Retired.After(t)) {
			continue
		}
		rk := RingKey{Key: k.Key, Signer: k.Signer, Published: k.Published, Since: k.Published}
		switch {
		case k.Signer == nil:
			rk.Role = RoleVerifyOnly
		case i == p:
			rk.Role, rk.Since = RolePrimary, k.Primary
			s.primary = sc.keys[i].sk
		case !k.Primary.IsZero() && !k.Primary.After(t):
			rk.Role, rk.Since = RolePrevious, sc.successor(i)
		default:
			rk.Role = RoleStaged
		}
		s.keys = append(s.keys, entry{RingKey: rk, sk: sc.keys[i].sk})
	}
	s.next = next
	return s
}

// successor returns when the key after primary i started signing.
func (sc *schedule) successor(i int) time.Time {
	n := slices.Index(sc.primaries, i)
	if n < 0 || n+1 >= len(sc.primaries) {
		return time.Time{}
	}
	return sc.keys[sc.primaries[n+1]].Primary
}

// current returns the ring's state at now: for a ring that follows a
// schedule, the state is moved on when now has reached its next
// transition.
func (r *Ring) current(now time.Time) *ringState {
	s := r.state.Load()
	if s.next.IsZero() || now.Before(s.next) {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s = r.state.Load()
	if s.next.IsZero() || now.Before(s.next) {
		return s
	}
	ns := s.sched.at(now)
	ns.served = carryServed(s, ns, time.Time{})
	r.state.Store(ns)
	r.changed(s, ns, ChangeSchedule, now)
	return ns
}

// The causes of a [RingChange].
const (
	// ChangeSchedule: a time the ring's schedule wrote has come.
	ChangeSchedule = "schedule"
	// ChangeUpdate: Update replaced the schedule.
	ChangeUpdate = "update"
	// ChangeRotation: Stage, AddVerifyOnly, Promote or Retire.
	ChangeRotation = "rotation"
)

// RingChange is what [RingConfig.OnChange] gets after the ring changed.
type RingChange struct {
	// Cause is ChangeSchedule, ChangeUpdate or ChangeRotation.
	Cause string
	// At is when the change took effect: the time the schedule wrote for
	// ChangeSchedule (the latest, when the ring noticed several at once),
	// the ring's clock otherwise.
	At time.Time
	// Primary is the key that signs after the change; PreviousPrimary the
	// one that signed before it (the same when it did not change).
	Primary, PreviousPrimary string
	// Keys are the ring's keys after the change, with their roles.
	Keys []RingKey
	// DataTimestamp is the data timestamp FetchKeys answers after it.
	DataTimestamp time.Time
}

// changed reports a change from old to s, with r.mu held.
func (r *Ring) changed(old, s *ringState, cause string, now time.Time) {
	if r.onChange == nil {
		return
	}
	at := now
	if cause == ChangeSchedule {
		at = s.sched.lastTransition(now)
	}
	r.onChange(RingChange{Cause: cause, At: at, Primary: s.primary.kid, PreviousPrimary: old.primary.kid, Keys: s.ringKeys(), DataTimestamp: s.stamp})
}

// lastTransition returns the latest time of the schedule at or before t.
func (sc *schedule) lastTransition(t time.Time) time.Time {
	var last time.Time
	for _, k := range sc.keys {
		for _, x := range []time.Time{k.Published, k.Primary, k.Retired} {
			if !x.IsZero() && !x.After(t) && x.After(last) {
				last = x
			}
		}
	}
	return last
}
