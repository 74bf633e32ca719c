package rotation

import (
	"fmt"
	"slices"
	"time"
)

// phase is a rotation's keys at an instant, by what they do.
type phase struct {
	cur  Key   // signs
	next *Key  // published or scheduled, not signing yet
	old  []Key // signed before cur, still published
}

// phaseAt classifies the keys at now.
func (s *Schedule) phaseAt(now time.Time) (phase, error) {
	var ph phase
	var signed, waiting []int
	for i, k := range s.keys {
		switch {
		case k.VerifyOnly || (!k.Retired.IsZero() && !k.Retired.After(now)):
		case !k.Signs.IsZero() && !k.Signs.After(now):
			signed = append(signed, i)
		case k.Signs.IsZero() && !k.Retired.IsZero():
			// A staged key being withdrawn is no next key.
		default:
			waiting = append(waiting, i)
		}
	}
	if len(signed) == 0 {
		return ph, &RuleError{Rule: ErrNoSigner, Index: -1, Reason: "none at " + stamp(now), SafeAt: s.keys[s.signers[0]].Signs}
	}
	slices.SortFunc(signed, func(a, b int) int { return s.keys[a].Signs.Compare(s.keys[b].Signs) })
	ph.cur = s.keys[signed[len(signed)-1]]
	for _, i := range signed[:len(signed)-1] {
		ph.old = append(ph.old, s.keys[i])
	}
	switch {
	case len(waiting) > 1:
		return ph, ruleError(ErrOneAtATime, s.keys[waiting[1]], waiting[1], "", fmt.Sprintf("keys[%d] is a next key too", waiting[0]), time.Time{})
	case len(waiting) == 1 && len(ph.old) > 0:
		return ph, ruleError(ErrOneAtATime, s.keys[waiting[0]], waiting[0], "", fmt.Sprintf("a next key while %q, which signed before, is not retired", ph.old[0].ID), time.Time{})
	case len(waiting) == 1:
		ph.next = &s.keys[waiting[0]]
	}
	return ph, nil
}

// stage returns the phase's stage.
func (ph phase) stage() Stage {
	switch {
	case len(ph.old) > 0:
		return StageNextSigns
	case ph.next != nil:
		return StageNextPublished
	}
	return StageSteady
}

// Next returns the one action a rotation under s takes at now, given the
// IDs each published copy of the key set holds (a nil copy: unreadable,
// it lacks every key), and the cadence:
//
//   - Repair, first, when a copy lacks a listed key of now or holds
//     another; when it lacks the next key before that signs, the next
//     key's wait starts again (Restart: its Signs moves to SignsAt when
//     earlier);
//   - at the steady stage, PublishNext once the signing key has signed
//     for Cadence.Every;
//   - with a next key, SignNext (at now plus Cadence.Delay) once it has
//     been published for the propagation time, unless the schedule writes
//     its switch: then the schedule moves by itself;
//   - with old keys, RetireOld once every token they signed has expired
//     (Policy.RetireWait after the signer took over), unless the schedule
//     writes their retirement;
//   - Wait otherwise, until the step is due or the schedule next changes.
//
// It refuses, with a *[RuleError], a schedule no key signs in at now
// ([ErrNoSigner]), one with two next keys or a next key beside old keys
// ([ErrOneAtATime]), and one whose next key signs at a written time less
// than the cadence's propagation time after it is published
// ([ErrStaging]); a cadence out of range is a *ksa.ConfigError.
func (s *Schedule) Next(copies [][]string, now time.Time, c Cadence) (Action, error) {
	if err := c.check(s.policy); err != nil {
		return Action{}, err
	}
	prop := max(s.policy.Propagation, c.Propagation)
	ph, err := s.phaseAt(now)
	if err != nil {
		return Action{}, err
	}
	st := s.At(now)
	a := Action{Stage: ph.stage(), Signer: ph.cur.ID, At: now}
	for _, o := range ph.old {
		a.Old = append(a.Old, o.ID)
	}
	a.Missing, a.Extra, a.Unknown = s.drift(st.Listed(), copies)
	if ph.next != nil {
		nk := *ph.next
		a.Next = nk.ID
		a.Restart = slices.Contains(a.Missing, nk.ID)
		if ready := nk.Published.Add(prop); !a.Restart && !nk.Signs.IsZero() && !nk.Published.IsZero() && nk.Signs.Before(ready) {
			return Action{}, ruleError(ErrStaging, nk, s.index(nk.ID), FieldSigns, fmt.Sprintf("%s is less than the propagation time %v after it is published (%s)", stamp(nk.Signs), prop, stamp(nk.Published)), ready)
		}
	}
	if len(a.Missing)+len(a.Extra)+len(a.Unknown) > 0 {
		a.Kind = Repair
		if a.Restart {
			a.SignsAt = later(ph.next.Signs, now.Add(prop))
			restarted := *ph.next
			restarted.Published = now
			if !restarted.Signs.IsZero() {
				restarted.Signs = a.SignsAt
			}
			ph.next = &restarted
		}
		a.Plan = s.plan(ph, now, c)
		return a, nil
	}
	wait := func(at time.Time, why Reason) (Action, error) {
		if !st.Next.IsZero() && (at.IsZero() || st.Next.Before(at)) {
			at, why = st.Next, WaitSchedule
		}
		a.Kind, a.At, a.For, a.Plan = Wait, at, why, s.plan(ph, now, c)
		return a, nil
	}
	switch a.Stage {
	case StageSteady:
		if c.Every == 0 {
			return wait(time.Time{}, WaitSchedule)
		}
		if at := ph.cur.Signs.Add(c.Every); now.Before(at) {
			return wait(at, WaitEvery)
		}
		a.Kind = PublishNext
		ph.next = &Key{Published: now}
	case StageNextPublished:
		nk := *ph.next
		switch {
		case nk.Published.After(now):
			return wait(nk.Published, WaitSchedule)
		case !nk.Signs.IsZero():
			return wait(nk.Signs, WaitSchedule)
		case !nk.Published.IsZero() && now.Before(nk.Published.Add(prop)):
			return wait(nk.Published.Add(prop), WaitPropagation)
		}
		// A key cannot take over at the instant the signer took over.
		a.Kind, a.At = SignNext, later(now.Add(c.Delay), ph.cur.Signs.Add(time.Nanosecond))
		nk.Signs = a.At
		ph = phase{cur: nk, old: []Key{ph.cur}}
	default:
		retire, why := ph.cur.Signs.Add(s.policy.RetireWait()), WaitTokens
		for _, o := range ph.old {
			if o.Retired.After(retire) {
				retire, why = o.Retired, WaitSchedule
			}
		}
		if now.Before(retire) {
			return wait(retire, why)
		}
		a.Kind = RetireOld
		ph.old = nil
	}
	a.Plan = s.plan(ph, now, c)
	return a, nil
}

// drift compares the copies with the listed keys.
func (s *Schedule) drift(listed []string, copies [][]string) (missing, extra, unknown []string) {
	add := func(list []string, id string) []string {
		if slices.Contains(list, id) {
			return list
		}
		return append(list, id)
	}
	for _, id := range listed {
		for _, c := range copies {
			if !slices.Contains(c, id) {
				missing = add(missing, id)
			}
		}
	}
	for _, c := range copies {
		for _, id := range c {
			switch {
			case s.index(id) < 0:
				unknown = add(unknown, id)
			case !slices.Contains(listed, id):
				extra = add(extra, id)
			}
		}
	}
	return missing, extra, unknown
}

// plan returns the steps that follow the phase ph, from now: the next
// key signs, the old keys retire, the key after is made.
func (s *Schedule) plan(ph phase, now time.Time, c Cadence) []Step {
	prop, wait := max(s.policy.Propagation, c.Propagation), s.policy.RetireWait()
	var steps []Step
	add := func(at time.Time, k Kind, keys []string, signer string) {
		if k != PublishNext || c.Every > 0 {
			steps = append(steps, Step{At: at, Kind: k, Keys: keys, Signer: signer})
		}
	}
	ids := func(k *Key) []string {
		if k == nil || k.ID == "" {
			return nil
		}
		return []string{k.ID}
	}
	switch {
	case len(ph.old) > 0:
		retire := later(ph.cur.Signs.Add(wait), now)
		var old []string
		for _, o := range ph.old {
			old = append(old, o.ID)
			retire = later(retire, o.Retired)
		}
		add(retire, RetireOld, old, ph.cur.ID)
		add(later(ph.cur.Signs.Add(c.Every), retire), PublishNext, nil, ph.cur.ID)
	case ph.next != nil:
		sign, delay := ph.next.Signs, time.Duration(0)
		if sign.IsZero() {
			sign, delay = later(ph.next.Published.Add(prop), now), c.Delay
		}
		signed := sign.Add(delay)
		add(sign, SignNext, ids(ph.next), ph.cur.ID)
		add(later(signed.Add(wait), ph.cur.Retired), RetireOld, []string{ph.cur.ID}, ph.next.ID)
		add(signed.Add(c.Every), PublishNext, nil, ph.next.ID)
	case c.Every > 0:
		publish := later(ph.cur.Signs.Add(c.Every), now)
		sign := publish.Add(prop)
		add(publish, PublishNext, nil, ph.cur.ID)
		add(sign, SignNext, nil, ph.cur.ID)
		add(sign.Add(c.Delay).Add(wait), RetireOld, []string{ph.cur.ID}, "")
	}
	return steps
}

// Apply returns the schedule after action a, found by [Schedule.Next] at
// a.At (its time for SignNext): for PublishNext, the key next is added,
// published from a.At, and the keys retired by then leave the schedule;
// SignNext writes a.At as the next key's Signs time; RetireOld writes a.At
// as the old keys' retirement; a Repair with Restart publishes the next
// key again from now and postpones its written switch to a.SignsAt (see
// [Schedule.Postpone]). Wait and other repairs change nothing. The result
// is checked as New checks a schedule; s is unchanged.
func (s *Schedule) Apply(a Action, next string) (*Schedule, error) {
	keys := slices.Clone(s.keys)
	set := func(id string, f func(k *Key)) error {
		i := s.index(id)
		if i < 0 {
			return &RuleError{Rule: ErrKeyID, KeyID: id, Index: -1, Reason: "not in the schedule"}
		}
		f(&keys[i])
		return nil
	}
	var err error
	switch {
	case a.Kind == PublishNext:
		keys = slices.DeleteFunc(keys, func(k Key) bool { return !k.Retired.IsZero() && !k.Retired.After(a.At) })
		keys = append(keys, Key{ID: next, Published: a.At})
	case a.Kind == SignNext:
		err = set(a.Next, func(k *Key) { k.Signs = a.At })
	case a.Kind == RetireOld:
		for _, id := range a.Old {
			if err == nil {
				err = set(id, func(k *Key) { k.Retired = a.At })
			}
		}
	case a.Kind == Repair && a.Restart:
		err = set(a.Next, func(k *Key) { k.Published = a.At })
		if err == nil {
			s.postpone(keys, s.index(a.Next), a.SignsAt)
		}
	default:
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return New(s.policy, keys)
}
