package extsigner

import (
	"errors"
	"fmt"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/rotation"
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
	if err := checkReplace(cur, sc, ns, now); err != nil {
		return err
	}
	ns.served = carryServed(cur, ns, now)
	old := r.state.Load()
	r.state.Store(ns)
	r.changed(old, ns, ChangeUpdate, now)
	return nil
}

// checkReplace refuses a new schedule sc (state ns at now) that could make
// a token fail that the ring in state cur may have signed or published: a
// key ID given to another key, and what the rotation model's CheckReplace
// refuses, counting each key's staging from when the ring first served
// it.
func checkReplace(cur *ringState, sc *schedule, ns *ringState, now time.Time) error {
	for _, k := range cur.keys {
		if j := sc.index(k.Key.KeyID); j >= 0 && !equalKeys(k.Key.Public, sc.keys[j].Key.Public) {
			return keyError(ErrDuplicateKeyID, k.Key.KeyID, "names another key than the one the ring publishes: give the new key another key ID", nil)
		}
	}
	err := cur.sched.rot.CheckReplace(sc.rot, now, cur.served)
	var re *rotation.RuleError
	if err == nil || !errors.As(err, &re) {
		return err
	}
	rerr := &RotationError{KeyID: re.KeyID, ReadyAt: re.SafeAt, Kind: ErrTooEarly}
	switch {
	case re.Rule == rotation.ErrStaging:
		rerr.Step, rerr.Role, rerr.Reason = "promote", RoleStaged, "published by the ring for less than the minimum staging time"
		if j := ns.index(re.KeyID); j >= 0 {
			rerr.Role = ns.keys[j].Role
		}
		if start := sc.keys[re.Index].Primary; start.After(now) {
			rerr.Reason = fmt.Sprintf("at %s: %s", stamp(start), rerr.Reason)
		}
	case re.Rule == rotation.ErrRetireEarly && re.Field == rotation.FieldRetired:
		rerr.Step, rerr.Reason = "retire", fmt.Sprintf("at %s, while tokens it signed may still be live", stamp(sc.keys[re.Index].Retired))
	case re.Rule == rotation.ErrRetireEarly:
		rerr.Step, rerr.Reason = "withdraw", "tokens it signed may still be live; keep it in the schedule"
	default: // no other rule refuses a replacement
		return errs.Wrap(prefix, ErrInvalidTransition, "", brokenRule{re})
	}
	if j := cur.index(re.KeyID); j >= 0 && rerr.Step != "promote" {
		rerr.Role = cur.keys[j].Role
	}
	return rerr
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
