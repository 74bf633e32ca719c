package podcertctl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/rotation"
)

// checkPublished checks the published bundle have at the start of a
// rotation: it refuses to start a rotation whose next CA the bundle lacks
// when the schedule's action at now (Schedule.Next, the bundle its one
// copy) is not a safe repair: the next CA would sign sooner than
// Propagation from now (the restart's SignsAt later than
// Rotation.SignsAt), or signs already, the retirement past included (a
// start then publishes the next CA alone, which only a bundle holding it
// already makes safe; else SignsAt is a mistake, a wrong year, and every
// live certificate of the current CA would fail). The refusal goes by
// SignsAt, not by a recorded switch: a record never makes a start safe.
func (c *Controller) checkPublished(have string, now time.Time) error {
	r := c.rot
	if r == nil {
		return nil
	}
	a, err := r.next(have, now)
	if err != nil {
		return err
	}
	if slices.Contains(a.Missing, r.nextID) && (!a.Restart || a.SignsAt.After(r.SignsAt)) {
		return errs.Wrap(prefix, ErrNextCANotPublished, fmt.Sprintf("%s: it signs at %s, less than %s from now, and ClusterTrustBundle %s does not hold it",
			errs.Text(ErrNextCANotPublished), r.SignsAt.UTC().Format(time.RFC3339), r.Propagation, c.cfg.TrustBundleName), nil)
	}
	return nil
}

// keepRotating is a round of a rotation (see round): it does what
// Schedule.Next says of the published bundle have at now. A replica that
// does not write the bundle (w nil) reads only: it waits for the
// schedule's next change. The writer publishes the bundle of now again
// when the bundle lacks a CA it must hold, or holds the former CA past
// the retirement, or lacks the record of the switch, or nothing was
// published in the Lease's term yet (first). A next CA missing before the
// switch postpones the switch to Propagation from now when that is later,
// recorded in the bundle published again: a Repair with Restart whose
// SignsAt is later than the switch is applied to the schedule
// (Schedule.Apply); at or past the schedule's switch, which the
// controller has not made (it has not seen the bundle hold the next CA),
// the switch is postponed so (Schedule.Postpone). A bundle holding other
// certificates besides those of now is left as it is. Once the bundle is
// written without the former CA at the retirement, a CARetired event
// says so. It returns until when to wait: the action's time, or after a
// repair the schedule's next change (zero: none).
func (c *Controller) keepRotating(w context.Context, first bool, api versionAPI, version string, have string, annotations map[string]string, now time.Time) (time.Time, error) {
	r := c.rot
	a, err := r.next(have, now)
	if err != nil {
		return time.Time{}, err
	}
	if w == nil {
		return r.schedule().At(now).Next, nil
	}
	switchAt, retireAt := r.times()
	nextMissing := slices.Contains(a.Missing, r.nextID) && !r.switched.Load()
	// Past the schedule's switch the next CA does not sign yet: the
	// switch is still to come, and moves.
	postponing := nextMissing && (!a.Restart || a.SignsAt.After(switchAt))
	retiring := slices.Contains(a.Extra, r.curID) && !now.Before(retireAt)
	repair := len(a.Missing) > 0 || retiring || !c.recorded(annotations, now)
	if !repair && !first {
		c.retired(now)
		return a.At, nil
	}
	if postponing {
		// Before publishing, so the bundle records the postponed switch.
		if err := r.postpone(a, now); err != nil {
			return time.Time{}, err
		}
	}
	if err := c.publish(w, api, version, have, annotations, now); err != nil {
		return time.Time{}, err
	}
	if repair {
		c.logRepair(a, nextMissing, postponing, retiring)
	}
	c.retired(now)
	return r.schedule().At(now).Next, nil
}

// retired says once, by a log line and a CARetired event, that the
// bundle this replica wrote or read as its writer no longer holds the
// former CA, from the retirement on.
func (c *Controller) retired(now time.Time) {
	r := c.rot
	if _, retireAt := r.times(); now.Before(retireAt) || holds(c.view.Load().pem, r.cur.TrustBundle()) || r.retired.Swap(true) {
		return
	}
	c.log.Info("the former CA is retired from the trust bundle", "ca", r.curID)
	c.observe(Event{Kind: CARetired})
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
