package extsigner

import (
	"crypto"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokens"
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
// A schedule is refused unless every transition it writes is safe, by the
// rules of package rotation (a schedule is a rotation.Schedule whose
// Propagation is MinStaging and whose retirement wait is Ring.RetireWait;
// the *ksa.ConfigError matches the rule's sentinel, such as
// rotation.ErrStaging): no two keys become primary at the same time; a key
// that takes over from another is published at least MinStaging before
// (so that every kube-apiserver and relying party knows it); a key that
// signed is retired no sooner than MaxTokenLifetime, MaxClockSkew,
// tokens.DefaultLeeway and a second after the next primary took over
// (when every token it signed has expired), and the last primary is never
// retired; times come in order (published, primary, retired), from 1970
// to the year 9999. The data timestamp FetchKeys answers is the latest
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

// schedule is a checked schedule: the ring's keys, prepared, and their
// times, checked by the rotation model.
type schedule struct {
	keys []scheduled
	rot  *rotation.Schedule
}

type scheduled struct {
	ScheduledKey
	sk *signingKey
}

// policy is the rotation policy of a ring's settings: a key signs
// MinStaging after it is published, and is retired once every token it
// signed has expired (the longest lifetime, the clock skew Sign allows on
// exp, the leeway validators allow after exp, and a second, the
// resolution of exp).
func (st settings) policy() rotation.Policy {
	return rotation.Policy{Propagation: st.minStaging, MaxLifetime: st.maxLifetime, Skew: MaxClockSkew + tokens.DefaultLeeway + time.Second}
}

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
	times := make([]rotation.Key, len(keys))
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
			if equalKeys(o.Key.Public, key.Public) {
				return nil, keyError(ErrDuplicateKeyID, key.KeyID, fmt.Sprintf("is the public key of Schedule[%d] (%q) again", j, o.Key.KeyID), nil)
			}
		}
		sc.keys = append(sc.keys, scheduled{ScheduledKey: k, sk: sk})
		times[i] = rotation.Key{ID: key.KeyID, Published: k.Published, Signs: k.Primary, Retired: k.Retired, VerifyOnly: k.Signer == nil, Unlisted: key.ExcludeFromDiscovery}
	}
	rot, err := rotation.New(st.policy(), times)
	var re *rotation.RuleError
	switch {
	case err == nil:
	case !errors.As(err, &re):
		return nil, err // the policy of checked settings: not reached
	case re.Rule == rotation.ErrNoSigner:
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: "names no key that signs (no Primary time)", Err: brokenRule{re}}
	case re.Rule == rotation.ErrKeyID:
		return nil, keyError(ErrDuplicateKeyID, re.KeyID, re.Reason, brokenRule{re})
	case re.Rule == rotation.ErrTooManyKeys:
		return nil, keyError(ErrTooManyKeys, "", re.Reason, brokenRule{re})
	default:
		return nil, &ksa.ConfigError{Field: fmt.Sprintf("extsigner.RingConfig.Schedule[%d]%s", re.Index, timeField(re.Field, "Published", "Primary", "Retired")), Reason: ruleReason(re, times, st), Err: brokenRule{re}}
	}
	sc.rot = rot
	if rot.At(now).Signer == "" {
		var first time.Time // the earliest primary time
		for _, k := range times {
			if !k.Signs.IsZero() && (first.IsZero() || k.Signs.Before(first)) {
				first = k.Signs
			}
		}
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: fmt.Sprintf("names no primary at %s: the first key signs at %s; give a key a primary time at or before now", stamp(now), stamp(first))}
	}
	return sc, nil
}

// stamp formats a time of a schedule in messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// timeField is ".<name>" of the time a rotation rule names (published,
// primary, retired: the names of RingConfig's fields or of the ring
// file's members), or "" when it names none.
func timeField(field, published, primary, retired string) string {
	switch field {
	case rotation.FieldPublished:
		return "." + published
	case rotation.FieldSigns:
		return "." + primary
	case rotation.FieldRetired:
		return "." + retired
	}
	return ""
}

// ruleReason says why the key re names breaks its rule of the rotation,
// and how to fix it, in the ring's words (a primary time for Signs, the
// minimum staging time for the propagation time); keys are the times
// given to rotation.New, st the ring's settings. A rule the ring has no
// words of its own for keeps the rotation's reason.
func ruleReason(re *rotation.RuleError, keys []rotation.Key, st settings) string {
	if re.Index < 0 || re.Index >= len(keys) {
		return re.Reason
	}
	k := keys[re.Index]
	switch {
	case re.Rule == rotation.ErrOrder && re.Field == rotation.FieldRetired && !re.SafeAt.IsZero():
		return fmt.Sprintf("%s is not after the key is published (%s): retire it later, or publish it earlier", stamp(k.Retired), stamp(k.Published))
	case re.Rule == rotation.ErrOrder && re.Field == rotation.FieldSigns && !re.SafeAt.IsZero():
		return fmt.Sprintf("%s is before the key is published (%s): a key must be published before it signs", stamp(k.Signs), stamp(k.Published))
	case re.Rule == rotation.ErrVerifyOnly && re.Field == rotation.FieldSigns:
		return "is set on a key that cannot sign (a verify-only key): remove it, or give the key a signer"
	case re.Rule == rotation.ErrTwoSigners:
		other := slices.IndexFunc(keys, func(o rotation.Key) bool { return o.Signs.Equal(k.Signs) })
		return fmt.Sprintf("%s is also the primary time of keys[%d]: two keys cannot start signing at once; give one a later time", stamp(k.Signs), other)
	case re.Rule == rotation.ErrStaging:
		return fmt.Sprintf("%s is less than the minimum staging time (%v) after the key is published (%s): every kube-apiserver and relying party must know a key before it signs; make it primary at %s or later, or publish it earlier",
			stamp(k.Signs), st.minStaging, stamp(k.Published), stamp(re.SafeAt))
	case re.Rule == rotation.ErrLastSigner:
		return "is set on the last key that signs: no key would sign after it; schedule the next primary first, and retire this key once the tokens it signed have expired"
	case re.Rule == rotation.ErrRetireEarly:
		// The key signs until the next one takes over: the earliest Signs
		// time after its own.
		next := -1
		for i, o := range keys {
			if o.Signs.After(k.Signs) && (next < 0 || o.Signs.Before(keys[next].Signs)) {
				next = i
			}
		}
		if next < 0 {
			return re.Reason
		}
		wait := st.policy().RetireWait()
		return fmt.Sprintf("%s is before every token the key signed has expired: it signs until keys[%d] takes over at %s, and tokens live up to %v more (the longest token lifetime, clock skew and leeway); retire it at %s or later",
			stamp(k.Retired), next, stamp(keys[next].Signs), wait, stamp(re.SafeAt))
	}
	return re.Reason
}

// brokenRule is the cause of a schedule refused: the rule of the rotation
// it breaks, for errors.Is (rotation.ErrStaging, ...) and errors.As
// (*rotation.RuleError). It prints nothing: the error it causes says it
// in the ring's words.
type brokenRule struct{ err *rotation.RuleError }

func (b brokenRule) Error() string { return "" }
func (b brokenRule) Unwrap() error { return b.err }

// at is the ring's state at t.
func (sc *schedule) at(t time.Time) *ringState {
	st := sc.rot.At(t)
	s := &ringState{sched: sc, stamp: st.DataTimestamp, next: st.Next, changedAt: st.Changed, keys: make([]entry, 0, len(st.Keys))}
	for _, k := range st.Keys {
		sk := sc.keys[k.Index]
		rk := RingKey{Key: sk.Key, Signer: sk.Signer, Published: k.Published, Since: k.Since}
		switch k.Role {
		case rotation.RoleVerifyOnly:
			rk.Role = RoleVerifyOnly
		case rotation.RoleSigning:
			rk.Role = RolePrimary
			s.primary = sk.sk
		case rotation.RolePrevious:
			rk.Role = RolePrevious
		default:
			rk.Role = RoleStaged
		}
		s.keys = append(s.keys, entry{RingKey: rk, sk: sk.sk})
	}
	return s
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
		at = s.changedAt
	}
	r.onChange(RingChange{Cause: cause, At: at, Primary: s.primary.kid, PreviousPrimary: old.primary.kid, Keys: s.ringKeys(), DataTimestamp: s.stamp})
}
