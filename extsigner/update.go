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
//   - one whose primary now is another key than the ring's and was not
//     published by the ring for at least MinStaging.
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
		cur = cur.sched.at(now) // what current(now) would make
	}
	sc, err := newSchedule(cfg.Schedule, st, now)
	if err != nil {
		return err
	}
	ns := sc.at(now)
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
	if ns.primary.kid == cur.primary.kid {
		return nil
	}
	ready := now.Add(r.minStaging)
	if i := cur.index(ns.primary.kid); i >= 0 {
		ready = cur.keys[i].Published.Add(r.minStaging)
		if cur.keys[i].Published.IsZero() {
			ready = time.Time{}
		}
	}
	if now.Before(ready) {
		role := RoleStaged
		if i := ns.index(ns.primary.kid); i >= 0 {
			role = ns.keys[i].Role
		}
		return &RotationError{Step: "promote", KeyID: ns.primary.kid, Role: role, Reason: "published by the ring for less than the minimum staging time", ReadyAt: ready, Kind: ErrTooEarly}
	}
	return nil
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
