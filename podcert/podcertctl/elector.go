package podcertctl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// elector is the controller's leader election: the Lease it holds or
// tries to, and the term it holds it for.
type elector struct {
	cfg    LeaderElectionConfig
	leases Leases
	// observed is the Lease's record as last read (holder, renewal,
	// version), observedAt when it was first read so, by the controller's
	// clock: another holder's Lease expires LeaseDuration after that, not
	// after the renewal time it states (another pod's clock).
	observed   string
	observedAt time.Time
	// term is the term this replica holds the Lease for; nil when it does
	// not.
	term atomic.Pointer[term]
}

// term is a time this replica holds the Lease: its context, cancelled
// when the term ends, and its last renewal.
type term struct {
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Duration
	mu       sync.Mutex
	renewed  time.Time
	// published: the trust bundle was published in this term.
	published atomic.Bool
}

// valid reports whether the term still allows writes at now: less than
// RenewDeadline since the last renewal.
func (t *term) valid(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return now.Before(t.renewed.Add(t.deadline))
}

func (t *term) renew(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.renewed = now
}

// elect runs leader election until ctx ends: every RetryPeriod it renews
// the Lease it holds, or tries to take it. A term begins when it takes
// the Lease (while run, Run's context, goes on): acquired then publishes
// in the term's context. A term ends, its context cancelled, when the
// Lease is seen held by another replica or RenewDeadline has passed since
// the last renewal. When ctx ends, it ends the term and gives the Lease
// up: Run ends ctx once nothing publishes any more.
func (c *Controller) elect(ctx, run context.Context, acquired func(ctx context.Context, now time.Time)) {
	e := c.lease
	for {
		now := c.cfg.Now()
		held, holder, err := e.try(ctx, now)
		if t := e.term.Load(); t != nil && (!t.valid(now) || (holder != "" && holder != e.cfg.Identity)) {
			e.end()
			c.log.Warn("lost the Lease: this replica no longer publishes the trust bundle", "lease", e.name(), "holder", holder)
			c.observe(Event{Kind: LeaseLost})
		}
		switch t := e.term.Load(); {
		case held && t == nil && run.Err() == nil:
			tctx, cancel := context.WithCancel(run)
			t = &term{ctx: tctx, cancel: cancel, deadline: e.cfg.RenewDeadline, renewed: now}
			e.term.Store(t)
			c.log.Info("holding the Lease: this replica publishes the trust bundle", "lease", e.name(), "identity", e.cfg.Identity)
			c.observe(Event{Kind: LeaseAcquired})
			acquired(tctx, now)
		case held && t != nil:
			t.renew(now)
		}
		if err != nil {
			level := "the Lease cannot be read or written; trying again"
			if e.term.Load() != nil {
				c.log.Warn(level, "lease", e.name(), "err", err, "in", e.cfg.RetryPeriod)
			} else {
				c.log.Debug(level, "lease", e.name(), "err", err, "in", e.cfg.RetryPeriod)
			}
		}
		select {
		case <-ctx.Done():
			c.resign(ctx)
			return
		case <-c.cfg.After(e.cfg.RetryPeriod):
		}
	}
}

// resign ends the term, if any, and gives the Lease up (in a context of
// its own: ctx has ended) when this replica holds it.
func (c *Controller) resign(ctx context.Context) {
	e := c.lease
	if e.term.Load() == nil {
		return
	}
	e.end()
	c.observe(Event{Kind: LeaseLost})
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RenewDeadline)
	defer cancel()
	if err := e.release(rctx, c.cfg.Now()); err != nil {
		c.log.Warn("stopped publishing; the Lease could not be given up, another replica takes it once it expires", "lease", e.name(), "err", err)
		return
	}
	c.log.Info("stopped publishing and gave the Lease up", "lease", e.name())
}

// end ends the term, if any.
func (e *elector) end() {
	if t := e.term.Swap(nil); t != nil {
		t.cancel()
	}
}

func (e *elector) name() string { return e.cfg.Namespace + "/" + e.cfg.Name }

// try reads the Lease at now and takes or renews it when it may: it holds
// no identity, or this one, or another whose record has not changed for
// the LeaseDuration it states. Each write carries the version read, so of
// replicas taking it at once one succeeds. It returns whether this replica
// holds the Lease, the holder it read, and the API server's error.
func (e *elector) try(ctx context.Context, now time.Time) (held bool, holder string, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	l, err := e.leases.Get(ctx, e.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name}}
		_, err = e.leases.Create(ctx, e.record(l, now), metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			return false, "", nil
		case err != nil:
			return false, "", wrap(err, "creating Lease %s", e.name())
		}
		return true, e.cfg.Identity, nil
	}
	if err != nil {
		return false, "", wrap(err, "reading Lease %s", e.name())
	}
	holder = deref(l.Spec.HolderIdentity)
	if seen := observedKey(l); seen != e.observed {
		e.observed, e.observedAt = seen, now
	}
	if holder != "" && holder != e.cfg.Identity && now.Before(e.observedAt.Add(e.duration(l))) {
		return false, holder, nil
	}
	_, err = e.leases.Update(ctx, e.record(l.DeepCopy(), now), metav1.UpdateOptions{})
	switch {
	case apierrors.IsConflict(err): // another replica wrote it first
		return false, holder, nil
	case err != nil:
		return false, holder, wrap(err, "updating Lease %s", e.name())
	}
	return true, e.cfg.Identity, nil
}

// record writes this replica's holding of l at now into l: renewed, or
// taken (acquired now, one more transition when it existed).
func (e *elector) record(l *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	id, at := e.cfg.Identity, metav1.NewMicroTime(now)
	s := &l.Spec
	if deref(s.HolderIdentity) != id {
		s.AcquireTime = &at
		if l.ResourceVersion != "" || s.HolderIdentity != nil {
			n := int32(1)
			if s.LeaseTransitions != nil {
				n = *s.LeaseTransitions + 1
			}
			s.LeaseTransitions = &n
		}
	}
	seconds := leaseSeconds(e.cfg.LeaseDuration)
	s.HolderIdentity, s.LeaseDurationSeconds, s.RenewTime = &id, &seconds, &at
	return l
}

// release gives the Lease up if this replica holds it: no holder, a
// second's duration, so the next replica to try takes it.
func (e *elector) release(ctx context.Context, now time.Time) error {
	l, err := e.leases.Get(ctx, e.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return wrap(err, "reading Lease %s", e.name())
	}
	if deref(l.Spec.HolderIdentity) != e.cfg.Identity {
		return nil
	}
	at, second := metav1.NewMicroTime(now), int32(1)
	l = l.DeepCopy()
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = nil, &second, &at
	if _, err := e.leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return wrap(err, "updating Lease %s", e.name())
	}
	return nil
}

// duration is how long l stays held unchanged: the duration it states,
// else this replica's LeaseDuration.
func (e *elector) duration(l *coordinationv1.Lease) time.Duration {
	if s := l.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return e.cfg.LeaseDuration
}

// observedKey is what tells one record of a Lease from the next.
func observedKey(l *coordinationv1.Lease) string {
	var renewed string
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
	}
	return deref(l.Spec.HolderIdentity) + "\x00" + renewed + "\x00" + l.ResourceVersion
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Leading reports whether this controller publishes the trust bundle
// now: with [Config.LeaderElection], whether it holds the Lease (renewed
// within RenewDeadline); without it, whether it publishes at all (not
// NoTrustBundle), every replica then being a writer. For a gauge: the
// replicas of one signer with leader election sum to 1, or to 0 for at
// most LeaseDuration and a RetryPeriod after a holder stops without
// giving its Lease up.
func (c *Controller) Leading() bool {
	if c.lease == nil {
		return !c.cfg.NoTrustBundle
	}
	t := c.lease.term.Load()
	return t != nil && t.valid(c.cfg.Now())
}

// writer returns the context the trust bundle is written in at now, and
// whether nothing was published in the term yet; nil when this replica
// must not write: it does not hold the Lease, or its term is past
// RenewDeadline. Without leader election it is ctx: Run published at its
// start.
func (c *Controller) writer(ctx context.Context, now time.Time) (w context.Context, first bool) {
	if c.lease == nil {
		return ctx, false
	}
	t := c.lease.term.Load()
	if t == nil || !t.valid(now) {
		return nil, false
	}
	return t.ctx, !t.published.Load()
}

// published notes a publication in the term of w, if any.
func (c *Controller) published(w context.Context) {
	if c.lease == nil {
		return
	}
	if t := c.lease.term.Load(); t != nil && t.ctx == w {
		t.published.Store(true)
	}
}
