package podcertctl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/rotation"
)

// checkPublished reads the published bundle at the start of a rotation:
// it refuses to start a rotation whose next CA the bundle lacks when the
// schedule's action at now (Schedule.Next, the bundle its one copy) is
// not a safe repair: the next CA would sign sooner than Propagation from
// now (the restart's SignsAt later than Rotation.SignsAt), or signs
// already, the retirement past included (a start then publishes the next
// CA alone, which only a bundle holding it already makes safe; else
// SignsAt is a mistake, a wrong year, and every live certificate of the
// current CA would fail). The refusal goes by SignsAt, not by a recorded
// switch: a record never makes a start safe. Then it keeps a later switch
// the bundle records for the same next CA ([SwitchAtAnnotation]).
func (c *Controller) checkPublished(ctx context.Context, api versionAPI, now time.Time) error {
	r := c.rot
	if r == nil {
		return nil
	}
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		return wrap(err, "reading ClusterTrustBundle %s", c.cfg.TrustBundleName)
	}
	a, err := r.next(have, now)
	if err != nil {
		return err
	}
	if slices.Contains(a.Missing, r.nextID) && (!a.Restart || a.SignsAt.After(r.SignsAt)) {
		return errs.Wrap(prefix, ErrNextCANotPublished, fmt.Sprintf("%s: it signs at %s, less than %s from now, and ClusterTrustBundle %s does not hold it",
			errs.Text(ErrNextCANotPublished), r.SignsAt.UTC().Format(time.RFC3339), r.Propagation, c.cfg.TrustBundleName), nil)
	}
	c.recall(annotations)
	return nil
}

// publish writes the bundle of now, logging and observing a write. A
// controller without a rotation keeps the valid CAs of the published
// bundle it does not sign with, after its own (another replica's next CA
// of a rotation, a former CA whose certificates are alive): dropping a CA
// whose certificates are valid breaks handshakes, so only a rotation's
// retirement, or deleting the ClusterTrustBundle, drops a CA.
func (c *Controller) publish(ctx context.Context, api versionAPI, version string, now time.Time) error {
	bundle := c.bundleAt(now)
	if c.rot == nil {
		have, _, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
		if err != nil {
			return wrap(err, "reading ClusterTrustBundle %s", c.cfg.TrustBundleName)
		}
		if kept, fps := othersKept(have, []byte(bundle), now); len(kept) > 0 {
			c.log.Warn("the published trust bundle holds valid CAs this controller does not sign with; keeping them",
				"trustBundle", c.cfg.TrustBundleName, "kept", fps,
				"hint", "run every replica with the same --ca-* and --next-ca-* flags; delete the ClusterTrustBundle to drop a CA at once")
			bundle += string(kept)
		}
	}
	written, err := api.publish(ctx, c.cfg.Client, c.cfg.TrustBundleName, c.cfg.Signer.SignerName(), bundle, c.ours(now))
	if err != nil {
		return wrap(err, "publishing ClusterTrustBundle %s", c.cfg.TrustBundleName)
	}
	if written {
		c.log.Info("trust bundle written", "trustBundle", c.cfg.TrustBundleName, "version", version)
		c.observe(Event{Kind: TrustBundleWritten})
	} else {
		c.log.Info("trust bundle up to date", "trustBundle", c.cfg.TrustBundleName, "version", version)
	}
	return nil
}

// rotate makes the rotation's changes at their times: the next CA signs,
// then the current CA leaves the trust bundle (tried again until written).
// Each round reads the published bundle and does what Schedule.Next says
// of it (keepPublished), then waits until the action's time, the
// schedule's next change, at most Config.Resync: so until the retirement
// the bundle is read again at the switch and every Resync, and published
// again when another writer (a replica without the rotation, a rollback)
// left a CA out. It returns when the retirement is done or ctx ends. Run
// published the bundle of its start already.
func (c *Controller) rotate(ctx context.Context, api versionAPI, version string) {
	r := c.rot
	retry := RetryDelay
	for {
		now := c.cfg.Now()
		at, err := c.keepPublished(ctx, api, version, now)
		switchAt, retireAt := r.times()
		switch {
		case err != nil:
			// Fail closed: the switch waits for a bundle seen to hold the
			// next CA.
			msg := "checking the published trust bundle; trying again"
			if !now.Before(retireAt) {
				msg = "retiring the former CA from the trust bundle; trying again"
			}
			// Logged only: Errored events count status writes.
			c.log.Error(msg, "err", err, "in", retry)
			at, retry = now.Add(retry), min(2*retry, MaxRetryDelay)
		case !r.switched.Load() && !now.Before(switchAt):
			r.switched.Store(true)
			c.log.Info("the next CA signs from now", "ca", r.nextID, "retiring", r.curID,
				"retireAt", retireAt.UTC().Format(time.RFC3339))
			c.observe(Event{Kind: CASwitched})
			continue
		case !now.Before(retireAt):
			c.log.Info("the former CA is retired from the trust bundle", "ca", r.curID)
			c.observe(Event{Kind: CARetired})
			return
		default:
			retry = RetryDelay
		}
		d := c.cfg.Resync
		if !at.IsZero() {
			d = min(at.Sub(now), d)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.cfg.After(d):
		}
	}
}

// keepPublished reads the published bundle, keeps a later switch it
// records, and repairs it as the schedule's action at now says: it
// publishes the bundle of now again when the bundle lacks a CA it must
// hold, or holds the former CA past the retirement, or lacks the record of
// the switch. A next CA missing before the switch postpones the switch to
// Propagation from now when that is later, recorded in the bundle
// published again: a Repair with Restart whose SignsAt is later than the
// switch is applied to the schedule (Schedule.Apply); at or past the
// schedule's switch, which the controller has not made (it has not seen
// the bundle hold the next CA), the switch is postponed so
// (Schedule.Postpone). A bundle holding other certificates besides those
// of now is left as it is. It returns until when to wait: the action's
// time, or after a repair the schedule's next change (zero: none).
func (c *Controller) keepPublished(ctx context.Context, api versionAPI, version string, now time.Time) (time.Time, error) {
	r := c.rot
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		return time.Time{}, wrap(err, "reading ClusterTrustBundle %s", c.cfg.TrustBundleName)
	}
	c.recall(annotations)
	a, err := r.next(have, now)
	if err != nil {
		return time.Time{}, err
	}
	switchAt, retireAt := r.times()
	nextMissing := slices.Contains(a.Missing, r.nextID) && !r.switched.Load()
	// Past the schedule's switch the next CA does not sign yet: the
	// switch is still to come, and moves.
	postponing := nextMissing && (!a.Restart || a.SignsAt.After(switchAt))
	retiring := slices.Contains(a.Extra, r.curID) && !now.Before(retireAt)
	recorded := c.recorded(annotations, now)
	if len(a.Missing) == 0 && !retiring && recorded {
		return a.At, nil
	}
	if postponing {
		// Before publishing, so the bundle records the postponed switch.
		if err := r.postpone(a, now); err != nil {
			return time.Time{}, err
		}
	}
	if err := c.publish(ctx, api, version, now); err != nil {
		return time.Time{}, err
	}
	c.logRepair(a, nextMissing, postponing, retiring)
	return r.schedule().At(now).Next, nil
}

// postpone moves the switch to Propagation from now, the retirement with
// it, for a next CA missing from the bundle before the controller
// switched: the action's restart, or at and past the schedule's switch a
// postponement of it.
func (r *caRotation) postpone(a rotation.Action, now time.Time) error {
	var sched *rotation.Schedule
	var err error
	if a.Restart {
		sched, err = r.schedule().Apply(a, "")
	} else {
		sched, err = r.schedule().Postpone(r.nextID, now.Add(r.Propagation))
	}
	if err != nil {
		return wrap(err, "postponing the switch to the next CA")
	}
	r.sched.Store(sched)
	return nil
}

// logRepair says what a repair of the published bundle mended: the next
// CA missing before the switch (nextMissing), which postponed it
// (postponing) or not, the former CA retired (retiring).
func (c *Controller) logRepair(a rotation.Action, nextMissing, postponing, retiring bool) {
	r := c.rot
	const hint = "another writer changed it: run every replica with the same --next-ca-* flags"
	switch {
	case postponing:
		switchAt, retireAt := r.times()
		c.log.Warn("the published trust bundle lacked the next CA; published it again and postponed the switch",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "signsAt", switchAt.UTC().Format(time.RFC3339),
			"retireAt", retireAt.UTC().Format(time.RFC3339), "hint", hint)
		c.warnExpiry()
		c.observe(Event{Kind: CASwitchPostponed})
	case nextMissing:
		c.log.Warn("the published trust bundle lacked the next CA; published it again in time for the switch",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "hint", hint)
	case slices.Contains(a.Missing, r.nextID):
		c.log.Error("the published trust bundle lacked the next CA, which signs already; published it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "hint", hint)
	case len(a.Missing) > 0:
		c.log.Warn("the published trust bundle lacked the current CA; published it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.curID, "hint", hint)
	case !retiring:
		c.log.Info("the published trust bundle lacked the record of the switch; recorded it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID)
	}
}
