package podcertctl

import (
	"time"
)

// Annotations of the published ClusterTrustBundle recording a rotation's
// switch, so a controller started again keeps a switch postponed before,
// and every replica knows when the current CA signs no more (see
// [Rotation] and the package's "Replicas and leader election").
const (
	// NextCAAnnotation is the hex SHA-256 fingerprint of the rotation's
	// next CA: a record names the rotation it is of.
	NextCAAnnotation = "ksa-go.github.io/next-ca"
	// SwitchAtAnnotation is when the next CA signs, RFC 3339: the
	// rotation's SignsAt, or later once postponed.
	SwitchAtAnnotation = "ksa-go.github.io/next-ca-signs-at"
	// RetiringCAAnnotation is the hex SHA-256 fingerprint of the
	// rotation's current CA, which signs no more from the switch and
	// leaves the bundle at the retirement: no replica signs with it from
	// the recorded switch on, whatever its own configuration.
	RetiringCAAnnotation = "ksa-go.github.io/retiring-ca"
)

// recordKeys are the annotations of a record.
var recordKeys = []string{NextCAAnnotation, SwitchAtAnnotation, RetiringCAAnnotation}

// ours returns the metadata of the bundle published at t, over the
// annotations have of the bundle read. During a rotation, until the
// retirement, it records the switch; from the retirement (the next CA
// alone) it removes the record, when the record is of this rotation (of
// its next CA). A controller without a rotation leaves a record as it is
// (another replica's, or a stopped rotation's, which only a rotation to
// the same next CA reads, and which can only delay its switch), unless
// the record retires the CA it signs with: it keeps that CA published, so
// nothing retires it (a rotation rolled back past its switch), and the
// record would keep every replica from signing with it.
func (c *Controller) ours(t time.Time, have map[string]string) ours {
	m := ours{labels: c.labels()}
	if c.rot == nil {
		if have[RetiringCAAnnotation] == fingerprint(c.cfg.Signer.CA()) {
			m.drop = recordKeys
		}
		return m
	}
	switchAt, retireAt := c.rot.times()
	if !t.Before(retireAt) {
		if fp := have[NextCAAnnotation]; fp == "" || fp == c.rot.nextID {
			m.drop = recordKeys
		}
		return m
	}
	m.annotations = map[string]string{
		NextCAAnnotation:     c.rot.nextID,
		SwitchAtAnnotation:   switchAt.UTC().Format(time.RFC3339),
		RetiringCAAnnotation: c.rot.curID,
	}
	return m
}

// recorded reports whether annotations hold the record of the rotation's
// switch as the bundle of t records it: the switch until the retirement,
// no record of this rotation from then.
func (c *Controller) recorded(annotations map[string]string, t time.Time) bool {
	m := c.ours(t, annotations)
	for _, k := range recordKeys {
		have, ok := annotations[k]
		switch {
		case m.annotations != nil && have != m.annotations[k]:
			return false
		case m.annotations == nil && ok && len(m.drop) > 0:
			return false
		}
	}
	return true
}

// recall postpones the switch to the one a published bundle's annotations
// record for the same next CA, when that is later (Schedule.Postpone): a
// controller started again after a postponement, or a replica that
// postponed, moves the switch and the retirement only later, never
// earlier, and never past [Controller.latestSwitch] (a later record is
// capped there, with a warning and a CASwitchRecordCapped event). A record
// of another next CA is ignored; a malformed one is ignored with a
// warning.
func (c *Controller) recall(annotations map[string]string) {
	r := c.rot
	fp, at := annotations[NextCAAnnotation], annotations[SwitchAtAnnotation]
	if r == nil || (fp == "" && at == "") {
		return
	}
	if fp != "" && fp != r.nextID {
		c.log.Info("the published trust bundle records the switch of another rotation; ignoring it",
			"trustBundle", c.cfg.TrustBundleName, "recordedCA", fp, "ca", r.nextID)
		return
	}
	t, err := time.Parse(time.RFC3339, at)
	if fp == "" || err != nil {
		c.log.Warn("the published trust bundle holds a malformed switch record; ignoring it",
			"trustBundle", c.cfg.TrustBundleName, NextCAAnnotation, fp, SwitchAtAnnotation, at)
		return
	}
	before, _ := r.times()
	if !t.After(before) || r.switched.Load() {
		return
	}
	if latest := c.latestSwitch(); t.After(latest) {
		c.log.Warn("the published trust bundle records a switch later than the rotation allows; keeping the latest safe switch instead",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "recorded", at, "latest", latest.UTC().Format(time.RFC3339),
			"hint", "another writer set "+SwitchAtAnnotation+": run every replica with the same --next-ca-* flags")
		c.observe(Event{Kind: CASwitchRecordCapped})
		if t = latest; !t.After(before) {
			return
		}
	}
	sched, err := r.schedule().Postpone(r.nextID, t)
	if err != nil {
		c.log.Warn("the published trust bundle records a switch the rotation cannot keep; ignoring it",
			"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "recorded", at, "err", err)
		return
	}
	r.sched.Store(sched)
	switchAt, retireAt := r.times()
	c.log.Info("the published trust bundle records a later switch; keeping it",
		"trustBundle", c.cfg.TrustBundleName, "ca", r.nextID, "signsAt", switchAt.UTC().Format(time.RFC3339),
		"retireAt", retireAt.UTC().Format(time.RFC3339))
	c.warnExpiry()
}

// latestSwitch is the latest switch a record may set: the current CA
// still issues certificates of the full MaxLifetime until then (its
// NotAfter less MaxLifetime; later, its certificates are cut short and,
// in the end, it cannot sign), and the next CA is valid until the
// retirement that follows (its NotAfter less MaxLifetime and Skew, the
// bound New holds SignsAt to). A record is a claim of whoever may update
// the bundle, not a postponement this controller saw: it never moves the
// switch past that.
func (c *Controller) latestSwitch() time.Time {
	r := c.rot
	p := r.schedule().Policy()
	latest := r.cur.CA().NotAfter.Add(-p.MaxLifetime)
	if next := r.Signer.CA().NotAfter.Add(-p.RetireWait()); next.Before(latest) {
		latest = next
	}
	return latest
}

// warnExpiry warns when the next CA expires before the retirement.
func (c *Controller) warnExpiry() {
	r := c.rot
	if _, retireAt := r.times(); r.Signer.CA().NotAfter.Before(retireAt) {
		c.log.Warn("the next CA expires before the postponed retirement", "ca", r.nextID,
			"notAfter", r.Signer.CA().NotAfter.UTC().Format(time.RFC3339))
	}
}
