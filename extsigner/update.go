package extsigner

import (
	"crypto"
	"fmt"
	"time"

	"github.com/ksa-go/ksa"
)

// Update replaces the schedule of a ring that follows one, as a reload of
// its ring file does: cfg.Schedule is checked as [NewRing] checks it, and
// its RefreshHint, MaxTokenLifetime and MinStaging must be the ring's
// (kube-apiserver reads them once; change them with a restart of both);
// the ring keeps its clock and OnChange. The change applies at once and
// whole, or not at all: requests under way finish with the ring they
// started with, and the key they sign with stays published.
//
// Update also refuses, with a *RotationError matching [ErrTooEarly] whose
// ReadyAt says when it becomes safe, a schedule that would make a live
// token fail now:
//
//   - one that withdraws, or retires before its wait is over, a key that
//     signed tokens that may be live (the primary, a previous key);
//   - one in which a key starts signing (now, or at a later Primary time)
//     less than MinStaging after this ring first published it: counted
//     from the later of its Published time and the ring's clock when the
//     key first appeared in the ring's key set, so that a key added with
//     a Published time in the past waits MinStaging like any other.
//
// and, matching [ErrDuplicateKeyID], one that gives a published key ID to
// another key. Other errors are a *ksa.ConfigError, or match
// [ErrDuplicateKeyID] or [ErrTooManyKeys], as for NewRing; a ring made
// from Keys is refused with [ErrInvalidTransition].
func (r *Ring) Update(cfg RingConfig) error {
	st, err := newSettings(cfg.RefreshHint, cfg.MaxTokenLifetime, cfg.MinStaging)
	if err != nil {
		return err
	}
	switch {
	case st.refresh != r.refresh:
		return &ksa.ConfigError{Field: "extsigner.RingConfig.RefreshHint", Reason: fmt.Sprintf("%v is not the ring's %v: restart the signer to change it", st.refresh, r.refresh)}
	case st.maxLifetime != r.maxLifetime:
		return &ksa.ConfigError{Field: "extsigner.RingConfig.MaxTokenLifetime", Reason: fmt.Sprintf("%v is not the ring's %v: kube-apiserver reads it once, so restart the signer and kube-apiserver to change it", st.maxLifetime, r.maxLifetime)}
	case st.minStaging != r.minStaging:
		return &ksa.ConfigError{Field: "extsigner.RingConfig.MinStaging", Reason: fmt.Sprintf("%v is not the ring's %v: restart the signer to change it", st.minStaging, r.minStaging)}
	case cfg.Keys != nil || cfg.Schedule == nil:
		return &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: "is required, and Keys must be empty, to update a ring"}
	case !cfg.DataTimestamp.IsZero():
		return &ksa.ConfigError{Field: "extsigner.RingConfig.DataTimestamp", Reason: "is set for a ring that follows a schedule, which derives it"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	cur := r.state.Load()
	if cur.sched == nil {
		return keyError(ErrInvalidTransition, "", "the ring does not follow a schedule: use Stage, Promote and Retire", nil)
	}
	if !cur.next.IsZero() && !now.Before(cur.next) {
		adv := cur.sched.at(now) // what current(now) would make
		adv.served = carryServed(cur, adv, time.Time{})
		cur = adv
	}
	sc, err := newSchedule(cfg.Schedule, st, now)
	if err != nil {
		return err
	}
	ns := sc.at(now)
	ns.served = carryServed(cur, ns, now)
	if err := r.safeUpdate(cur, sc, ns, now); err != nil {
		return err
	}
	old := r.state.Load()
	r.state.Store(ns)
	r.changed(old, ns, ChangeUpdate, now)
	return nil
}

// safeUpdate refuses a new schedule sc (state ns at now) that could make a
// token fail that the ring in state cur may have signed or published.
func (r *Ring) safeUpdate(cur *ringState, sc *schedule, ns *ringState, now time.Time) error {
	wait := r.retireWait()
	for _, k := range cur.keys {
		j := sc.index(k.Key.KeyID)
		if j >= 0 {
			if eq, ok := k.Key.Public.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(sc.keys[j].Key.Public) {
				return keyError(ErrDuplicateKeyID, k.Key.KeyID, "names another key than the one the ring publishes: give the new key another key ID", nil)
			}
		}
		var until time.Time // the key must stay published until then
		switch k.Role {
		case RolePrimary:
			until = now.Add(wait)
		case RolePrevious:
			until = k.Since.Add(wait)
		default:
			continue
		}
		if !until.After(now) {
			continue
		}
		if j < 0 || ns.index(k.Key.KeyID) < 0 {
			return &RotationError{Step: "withdraw", KeyID: k.Key.KeyID, Role: k.Role, Reason: "tokens it signed may still be live; keep it in the schedule", ReadyAt: until, Kind: ErrTooEarly}
		}
		if retired := sc.keys[j].Retired; !retired.IsZero() && retired.Before(until) {
			return &RotationError{Step: "retire", KeyID: k.Key.KeyID, Role: k.Role, Reason: fmt.Sprintf("at %s, while tokens it signed may still be live", stamp(retired)), ReadyAt: until, Kind: ErrTooEarly}
		}
	}
	// Every key that starts signing from now on must have been published
	// by this ring for MinStaging by then, counted from the later of its
	// written Published time and when the ring first published it: a key
	// this update adds with a Published time in the past is first
	// published now, and no kube-apiserver or relying party can hold it
	// yet.
	p := sc.primaryAt(now)
	for _, i := range sc.primaries {
		k := sc.keys[i]
		start := k.Primary
		if !start.After(now) {
			if i != p || k.Key.KeyID == cur.primary.kid {
				continue // signed before now, or signs already
			}
			start = now
		}
		from := k.Published
		if t, ok := ns.served[k.Key.KeyID]; ok && t.After(from) {
			from = t
		}
		if ready := from.Add(r.minStaging); start.Before(ready) {
			role := RoleStaged
			if j := ns.index(k.Key.KeyID); j >= 0 {
				role = ns.keys[j].Role
			}
			reason := "published by the ring for less than the minimum staging time"
			if start.After(now) {
				reason = fmt.Sprintf("at %s: %s", stamp(start), reason)
			}
			return &RotationError{Step: "promote", KeyID: k.Key.KeyID, Role: role, Reason: reason, ReadyAt: ready, Kind: ErrTooEarly}
		}
	}
	return nil
}

// carryServed returns when the ring first published each key of s: a key
// that old (the ring's state before s) published keeps its time; a key new
// to the set takes appeared (an Update's time), or, when appeared is zero
// (a time of the schedule came, or the ring is made), its written
// Published time (zero: from the start).
func carryServed(old, s *ringState, appeared time.Time) map[string]time.Time {
	served := make(map[string]time.Time, len(s.keys))
	for _, k := range s.keys {
		kid := k.Key.KeyID
		if t, ok := old.servedAt(kid); ok {
			served[kid] = t
			continue
		}
		if appeared.IsZero() {
			served[kid] = k.Published
		} else {
			served[kid] = appeared
		}
	}
	return served
}

// servedAt returns when the ring first published the key with keyID, if
// the state s publishes it.
func (s *ringState) servedAt(keyID string) (time.Time, bool) {
	if s == nil {
		return time.Time{}, false
	}
	t, ok := s.served[keyID]
	return t, ok
}

// index returns the position of the key with keyID in the schedule, or -1.
func (sc *schedule) index(keyID string) int {
	for i, k := range sc.keys {
		if k.Key.KeyID == keyID {
			return i
		}
	}
	return -1
}
