package publish

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/rotation"
)

// decide finds the action due, and refuses a ring file and store the
// rotation cannot move on from.
func (st *step) decide() error {
	res, now := st.res, st.res.Now
	copies := make([][]string, len(res.Copies))
	for i, c := range res.Copies {
		copies[i] = c.KeyIDs
	}
	a, err := res.Schedule.Next(copies, now, st.cfg.Cadence)
	if err != nil {
		return st.ruleError(err)
	}
	res.Action, res.Listed = a, res.Schedule.At(now).Listed()
	if a.Next != "" && st.key(a.Next).Published.IsZero() {
		i := res.Entries[a.Next]
		return &RotationError{Kind: ErrNoPublishedTime, What: "the ring file's " + entry(i) + " has no published time: how long relying parties have had it is unknown", Entries: []int{i}, KeyID: a.Next}
	}
	for _, id := range a.Unknown {
		for _, c := range res.Copies {
			if slices.Contains(c.KeyIDs, id) {
				return &RotationError{Kind: ErrUnknownKey, What: st.cfg.Store.Location().String() + " publishes key " + id + " in " + c.Name + ", which the ring file never had: the ring and the store disagree",
					KeyID: id, Object: c.Name}
			}
		}
	}
	if next := st.key(a.Next); a.Restart && !next.Signs.IsZero() && a.SignsAt.After(next.Signs) {
		return st.earlySwitch(next, now, true)
	}
	return nil
}

// key returns the schedule's key of ID id (the zero Key for "").
func (st *step) key(id string) rotation.Key {
	for _, k := range st.res.Schedule.Keys() {
		if id != "" && k.ID == id {
			return k
		}
	}
	return rotation.Key{}
}

// earlySwitch is the refusal of a switch the ring file writes less than
// the propagation time after the copies got the next key (since).
func (st *step) earlySwitch(next rotation.Key, since time.Time, restarted bool) error {
	i := st.res.Entries[next.ID]
	return &RotationError{Kind: ErrEarlySwitch, Entries: []int{i}, KeyID: next.ID, At: next.Signs, Since: since, Restarted: restarted,
		SafeAt: since.Add(st.res.Propagation), Propagation: st.res.Propagation,
		What: "the ring file makes key " + next.ID + " sign at " + stamp(next.Signs) + ", less than the propagation time " + st.res.Propagation.String() + " after the copies got it (" + stamp(since) + ")"}
}

// ruleError words a schedule Next refused.
func (st *step) ruleError(err error) error {
	var re *rotation.RuleError
	if !errors.As(err, &re) {
		return err // a cadence out of range: a *ksa.ConfigError
	}
	now := st.res.Now
	switch {
	case errors.Is(err, rotation.ErrNoSigner):
		return &RotationError{Kind: rotation.ErrNoSigner, What: "the ring file names no key that signs at " + stamp(now), Err: err}
	case errors.Is(err, rotation.ErrStaging):
		return st.earlySwitch(st.key(re.KeyID), st.key(re.KeyID).Published, false)
	case errors.Is(err, rotation.ErrOneAtATime):
		return st.oneAtATime(err)
	}
	return &RotationError{Kind: ErrRingFile, What: "the ring file is refused", Err: err}
}

// oneAtATime says which keys of the ring file make two rotations at once:
// two next keys, or a next key while an old key is not retired.
func (st *step) oneAtATime(err error) error {
	now := st.res.Now
	var waiting, signed []rotation.Key
	for _, k := range st.res.Schedule.Keys() {
		switch {
		case k.VerifyOnly || (!k.Retired.IsZero() && !k.Retired.After(now)):
		case !k.Signs.IsZero() && !k.Signs.After(now):
			signed = append(signed, k)
		case k.Signs.IsZero() && !k.Retired.IsZero():
		default:
			waiting = append(waiting, k)
		}
	}
	e := &RotationError{Kind: rotation.ErrOneAtATime, Err: err}
	if len(waiting) > 1 {
		e.Entries = []int{st.res.Entries[waiting[0].ID], st.res.Entries[waiting[1].ID]}
		e.What = "the ring file names " + itoa(len(waiting)) + " next keys (" + entry(e.Entries[0]) + " and " + entry(e.Entries[1]) + "): a rotation moves one key at a time"
		return e
	}
	slices.SortFunc(signed, func(a, b rotation.Key) int { return a.Signs.Compare(b.Signs) })
	e.Old = true
	e.Entries = []int{st.res.Entries[waiting[0].ID], st.res.Entries[signed[0].ID]}
	e.What = "the ring file names a next key (" + entry(e.Entries[0]) + ") while an old key (" + entry(e.Entries[1]) + ") is not retired yet"
	return e
}

// act makes the change due, unless it waits.
func (st *step) act(ctx context.Context) error {
	a, now := st.res.Action, st.res.Now
	edited := *st.file
	edited.Keys = slices.Clone(st.file.Keys)
	switch a.Kind {
	case rotation.Repair:
		if i := st.res.Entries[a.Next]; a.Restart && edited.Keys[i].Primary.IsZero() {
			// Relying parties may not have the next key: its wait starts
			// again, and the ring file says so before the store has it.
			edited.Keys[i].Published = now
			if err := st.writeRing(ctx, &edited); err != nil {
				return err
			}
		}
		return st.publish(ctx)
	case rotation.PublishNext:
		return st.addNext(ctx)
	case rotation.SignNext:
		edited.Keys[st.res.Entries[a.Next]].Primary = a.At
		return st.writeRing(ctx, &edited)
	case rotation.RetireOld:
		for _, id := range a.Old {
			edited.Keys[st.res.Entries[id]].Retired = a.At
		}
		if err := st.writeRing(ctx, &edited); err != nil {
			return err
		}
		return st.publish(ctx)
	}
	return nil
}

// writeRing writes f in place of the ring file read.
func (st *step) writeRing(ctx context.Context, f *extsigner.RingFile) error {
	if err := st.cfg.Ring.Write(ctx, f, st.version); err != nil {
		return err
	}
	st.file, st.res.Ring = f, f
	return nil
}

// addNext makes the next key, adds it to the ring file published and not
// signing (dropping the keys retired by now), then publishes it.
func (st *step) addNext(ctx context.Context) error {
	now := st.res.Now
	next := *st.file
	next.Keys = nil
	for _, k := range st.file.Keys {
		if k.Retired.IsZero() || k.Retired.After(now) {
			next.Keys = append(next.Keys, k)
		}
	}
	// The ring file with the next key is checked before the key is made.
	const placeholder = "\x00the next key"
	probe := next
	probe.Keys = append(slices.Clone(next.Keys), extsigner.RingFileKey{Key: placeholder, Published: now})
	if err := probe.Check(); err != nil {
		return &RotationError{Kind: ErrRingFile, What: "the ring file with the next key is refused", Err: err}
	}
	current := st.file.Keys[st.res.Entries[st.res.Action.Signer]].Key
	ref, err := st.cfg.NewKey(ctx, KeyRequest{Now: now, Current: current})
	if err != nil {
		return err
	}
	next.Keys = append(next.Keys, extsigner.RingFileKey{Key: ref, Published: now})
	if err := next.Check(); err != nil {
		return &RotationError{Kind: ErrRingFile, What: "the ring file with the next key is refused", Err: err}
	}
	cfg, _, err := st.openRing(ctx, &next)
	if err != nil {
		return err
	}
	kid := cfg.Schedule[len(cfg.Schedule)-1].Key.KeyID
	if err := st.writeRing(ctx, &next); err != nil {
		return err
	}
	st.res.NextKey, st.res.NextKeyID = ref, kid
	for i, s := range st.res.Action.Plan {
		if s.Kind == rotation.SignNext && len(s.Keys) == 0 {
			st.res.Action.Plan[i].Keys = []string{kid}
		}
		if s.Signer == "" {
			st.res.Action.Plan[i].Signer = kid
		}
	}
	return st.publish(ctx)
}

// openRing opens a ring file's keys at the step's time.
func (st *step) openRing(ctx context.Context, f *extsigner.RingFile) (extsigner.RingConfig, *extsigner.Ring, error) {
	cfg, err := f.Open(ctx, st.cfg.Keys)
	if err == nil {
		now := st.res.Now
		cfg.Now = func() time.Time { return now }
		var ring *extsigner.Ring
		if ring, err = extsigner.NewRing(cfg); err == nil {
			return cfg, ring, nil
		}
	}
	return cfg, nil, &RotationError{Kind: ErrRingFile, What: "the ring file is refused", Err: err}
}

// publish publishes the key set the ring file publishes now to every copy,
// the discovery document (as read) last, each write conditional on what
// the step read.
func (st *step) publish(ctx context.Context) error {
	_, ring, err := st.openRing(ctx, st.file)
	if err != nil {
		return err
	}
	md, _ := st.site.Metadata() // parsed when read
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: md.Issuer, JWKSURI: md.JWKSURI}, ring.KeySet().Keys)
	if err != nil {
		return &RotationError{Kind: ErrRingFile, What: "rendering the ring file's key set", Err: err}
	}
	st.site.KeySet = docs.JWKS
	pr, err := Publish(ctx, st.cfg.Store, st.site, PublishOptions{Versions: st.versions})
	if pr != nil {
		st.res.Withdrawn = pr.Withdrawn
	}
	return err
}

// stamp formats a time of a schedule.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
