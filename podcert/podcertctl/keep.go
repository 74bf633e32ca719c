package podcertctl

import (
	"context"
	"time"
)

// begin reads the published trust bundle before anything is decided: the
// rotation's check of it (checkPublished) and its record, then the view
// the signers go by. Without leader election it then publishes the bundle
// of now; with it, the Lease's holder does (keep). Its errors keep Run
// from starting.
func (c *Controller) begin(ctx context.Context, api versionAPI, version string) error {
	now := c.cfg.Now()
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		return wrap(err, "reading ClusterTrustBundle %s", c.cfg.TrustBundleName)
	}
	if err := c.checkPublished(have, now); err != nil {
		return err
	}
	c.recall(annotations)
	c.view.Store(viewOf(have, annotations))
	if c.lease == nil {
		if err := c.publish(ctx, api, version, have, annotations, now); err != nil {
			return err
		}
	}
	if r := c.rot; r != nil {
		// Past the switch (SignsAt, or the later one the bundle recorded),
		// the next CA signs at once when the bundle holds it.
		switchAt, retireAt := r.times()
		r.switched.Store(!now.Before(switchAt) && holds(c.view.Load().pem, r.Signer.TrustBundle()))
		c.log.Info("rotating the CA", "ca", r.curID, "next", r.nextID,
			"signsAt", switchAt.UTC().Format(time.RFC3339), "retireAt", retireAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// startKeeping starts keep, and returns the function that stops it and
// waits for it.
func (c *Controller) startKeeping(ctx context.Context, api versionAPI, version string) (stop func()) {
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.keep(kctx, api, version)
	}()
	return func() {
		cancel()
		<-done
	}
}

// keep follows the published trust bundle on every replica until ctx
// ends: each round (round) reads it, keeps a later switch it records,
// and, on the replica that writes it (the Lease's holder, or every
// replica without leader election), repairs it; then the rotation's
// switch is made once the bundle is seen to hold the next CA. It waits
// until the round's time (the rotation's next change), at most
// Config.Resync; after a failed read or write, or while the CA that
// signs now is not published (signerNow), it reads again after
// RetryDelay, doubling up to MaxRetryDelay.
func (c *Controller) keep(ctx context.Context, api versionAPI, version string) {
	r := c.rot
	retry := RetryDelay
	refused := false
	for {
		now := c.cfg.Now()
		at, err := c.round(ctx, api, version, now)
		if err == nil && r != nil && !r.switched.Load() {
			if switchAt, retireAt := r.times(); !now.Before(switchAt) && holds(c.view.Load().pem, r.Signer.TrustBundle()) {
				r.switched.Store(true)
				c.log.Info("the next CA signs from now", "ca", r.nextID, "retiring", r.curID,
					"retireAt", retireAt.UTC().Format(time.RFC3339))
				c.observe(Event{Kind: CASwitched})
				continue
			}
		}
		_, why := c.signerNow(now)
		switch {
		case err != nil:
			// Logged only: Errored events count status writes.
			c.log.Error("following the published trust bundle; trying again", "err", err, "in", retry)
			at, retry = now.Add(retry), min(2*retry, MaxRetryDelay)
		case why != nil:
			// Fail closed: nothing signs until the bundle holds the CA.
			if !refused {
				c.log.Warn("not signing: the CA that signs now is not published; reading the trust bundle again until it is", "err", why, "in", retry)
			}
			at, retry = now.Add(retry), min(2*retry, MaxRetryDelay)
		default:
			retry = RetryDelay
		}
		refused = err == nil && why != nil
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

// round reads the published bundle at now, keeps a later switch it
// records, updates the view the signers go by and, when this replica
// writes the bundle now (writer), repairs it: with a rotation as
// keepRotating says, without one when it lacks this controller's CA, or
// records the retirement of it, or nothing was published in the Lease's
// term yet. It returns until when to wait (zero: Resync). A read that
// fails leaves a view that holds nothing: nothing signs until a read
// succeeds.
func (c *Controller) round(ctx context.Context, api versionAPI, version string, now time.Time) (time.Time, error) {
	c.rounds.Lock()
	defer c.rounds.Unlock()
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		err = wrap(err, "reading ClusterTrustBundle %s", c.cfg.TrustBundleName)
		c.view.Store(&bundleView{err: err})
		return time.Time{}, err
	}
	c.recall(annotations)
	c.view.Store(viewOf(have, annotations))
	w, first := c.writer(ctx, now)
	if c.rot != nil {
		return c.keepRotating(w, first, api, version, have, annotations, now)
	}
	if w == nil || (!first && holds(have, c.cfg.Signer.TrustBundle()) && len(c.ours(now, annotations).drop) == 0) {
		return time.Time{}, nil
	}
	if !first {
		c.log.Warn("the published trust bundle lacked the CA, or recorded its retirement; published it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", fingerprint(c.cfg.Signer.CA()),
			"hint", "another writer changed it: run every replica with the same --ca-* flags")
	}
	return time.Time{}, c.publish(w, api, version, have, annotations, now)
}

// acquired is the round of a Lease's holder as its term begins: it reads
// the bundle and its record, then publishes.
func (c *Controller) acquired(api versionAPI, version string) func(ctx context.Context, now time.Time) {
	return func(ctx context.Context, now time.Time) {
		if _, err := c.round(ctx, api, version, now); err != nil {
			c.log.Error("publishing the trust bundle as the Lease's holder; trying again", "err", err)
		}
	}
}

// publish writes the bundle of now over have and annotations, the
// bundle read, logging and observing a write, and makes it the view. It
// keeps the valid CAs of have it does not publish itself, after its own
// (another replica's CA, a former CA whose certificates are alive):
// dropping a CA whose certificates are valid breaks handshakes, so only a
// rotation's retirement of its current CA, or deleting the
// ClusterTrustBundle, drops a valid CA.
func (c *Controller) publish(ctx context.Context, api versionAPI, version string, have string, annotations map[string]string, now time.Time) error {
	bundle := c.bundleAt(now)
	var retired []string
	if r := c.rot; r != nil {
		if _, retireAt := r.times(); !now.Before(retireAt) {
			retired = []string{r.curID}
		}
	}
	if kept, fps := othersKept(have, []byte(bundle), now, retired); len(kept) > 0 {
		c.log.Warn("the published trust bundle holds valid CAs this controller does not sign with; keeping them",
			"trustBundle", c.cfg.TrustBundleName, "kept", fps,
			"hint", "run every replica with the same --ca-* and --next-ca-* flags; delete the ClusterTrustBundle to drop a CA at once")
		bundle += string(kept)
	}
	written, stored, err := api.publish(ctx, c.cfg.Client, c.cfg.TrustBundleName, c.cfg.Signer.SignerName(), bundle, c.ours(now, annotations))
	if err != nil {
		return wrap(err, "publishing ClusterTrustBundle %s", c.cfg.TrustBundleName)
	}
	c.view.Store(stored)
	c.published(ctx)
	if written {
		c.log.Info("trust bundle written", "trustBundle", c.cfg.TrustBundleName, "version", version)
		c.observe(Event{Kind: TrustBundleWritten})
	} else {
		c.log.Info("trust bundle up to date", "trustBundle", c.cfg.TrustBundleName, "version", version)
	}
	return nil
}
