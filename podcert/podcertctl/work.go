package podcertctl

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/ksa-go/ksa/podcert"
)

// queue is the controller's work queue of request keys.
type queue = workqueue.TypedRateLimitingInterface[string]

// work watches the requests of the signer name and decides them with
// Config.Workers workers until ctx ends; it returns once the status writes
// under way are done.
func (c *Controller) work(ctx context.Context, api versionAPI, version string) error {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](RetryDelay, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	))
	defer q.ShutDown()
	inf := api.informer(c.cfg.Client, c.cfg.Signer.SignerName(), c.cfg.Resync)
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return wrap(err, "watching requests")
	}
	c.watch.Store(&watching{api: api, store: inf.GetStore(), synced: inf.HasSynced})
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // ctx ended
	}
	c.log.Info("deciding requests", "signer", c.cfg.Signer.SignerName(), "version", version, "workers", c.cfg.Workers)
	// A write under way when ctx ends is finished (within
	// writeTimeout), so the count of statuses written is exact.
	writes := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Go(func() {
			for c.next(writes, q, inf.GetStore(), api) {
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	return nil
}

// next decides one queued request; false when the queue is shut down.
func (c *Controller) next(ctx context.Context, q queue, store cache.Store, api versionAPI) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	obj, ok, err := store.GetByKey(key)
	if err != nil || !ok {
		q.Forget(key)
		return true
	}
	ev := Event{}
	if m, err := meta.Accessor(obj); err == nil {
		ev.Namespace, ev.Name, ev.UID = m.GetNamespace(), m.GetName(), m.GetUID()
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	start := c.cfg.Now()
	// A request decided already is skipped (decide) whatever the bundle
	// holds; one to decide waits for a CA the bundle holds (signerNow).
	signer, _ := c.signer()

	if _, ok := api.undecided(obj, c.cfg.Signer.SignerName()); ok {
		signer, err = c.signerNow(start)
	}
	var d *podcert.Decision
	if err == nil {
		d, err = api.decide(ctx, c.cfg.Client, signer, obj)
	}
	at := c.cfg.Now()
	ev.Duration, ev.Err = at.Sub(start), err
	if d != nil && d.Outcome == podcert.Issued {
		c.ca.record(at, nil) // the CA key signed, whatever became of the write
	}
	l := c.handled(&ev, d, signer, q, key)
	if ev.Kind == CAKeyFailed {
		c.ca.record(at, err)
	}
	// The line about the request is written once the event is observed:
	// metrics are never behind the log.
	c.observe(ev)
	if l.msg != "" {
		c.log.With("namespace", ev.Namespace, "name", ev.Name, "uid", string(ev.UID)).Log(ctx, l.level, l.msg, l.attrs...)
	}
	return true
}

// line is a log line about a request.
type line struct {
	level slog.Level
	msg   string
	attrs []any
}

// handled completes the event of a request decided as d (or not: ev.Err),
// counts it, puts the request back on the queue or forgets it, and
// returns what the log says of it.
func (c *Controller) handled(ev *Event, d *podcert.Decision, signer *podcert.Signer, q queue, key string) line {
	err := ev.Err
	switch {
	case err == nil && d == nil:
		ev.Kind = Skipped
		q.Forget(key)
	case err == nil:
		ev.Kind, ev.Decision = Decided, d
		q.Forget(key)
		c.count(d.Outcome)
		l := line{slog.LevelInfo, "decided", []any{"outcome", d.Outcome.String(), "reason", d.Reason, "message", d.Message, "took", ev.Duration}}
		if d.Outcome == podcert.Issued {
			l.attrs = append(l.attrs, "ca", fingerprint(signer.CA()))
		}
		return l
	case apierrors.IsNotFound(err):
		ev.Kind, ev.Err = Skipped, nil
		q.Forget(key)
		return line{slog.LevelInfo, "request deleted before its status was written", nil}
	case apierrors.IsConflict(err):
		ev.Kind, ev.Retry = Conflict, true
		c.stats.conflicts.Add(1)
		q.AddRateLimited(key)
		return line{slog.LevelDebug, "request changed meanwhile; reading it again", nil}
	case errors.Is(err, ErrCANotPublished):
		// Fail closed, and not the request's fault: tried again however
		// often, as the queue's backoff allows.
		ev.Kind, ev.Retry = Deferred, true
		c.stats.deferred.Add(1)
		q.AddRateLimited(key)
		return line{slog.LevelDebug, "not signing until the CA is in the published trust bundle; trying again", []any{"err", err}}
	case caKeyError(err):
		// Not the request's fault: tried again for as long as the key
		// fails, MaxRetries or not.
		ev.Kind, ev.Retry = CAKeyFailed, true
		c.stats.caKeyErrors.Add(1)
		attempt := q.NumRequeues(key) + 1
		q.AddRateLimited(key)
		return line{slog.LevelWarn, "the CA key failed to sign; trying again", []any{"attempt", attempt, "err", err}}
	case q.NumRequeues(key) < c.cfg.MaxRetries && retriable(err):
		ev.Kind, ev.Retry = Errored, true
		c.stats.errors.Add(1)
		attempt := q.NumRequeues(key) + 1
		q.AddRateLimited(key)
		return line{slog.LevelError, "writing status; trying again", []any{"attempt", attempt, "err", err}}
	default:
		ev.Kind = Errored
		c.stats.errors.Add(1)
		q.Forget(key)
		return line{slog.LevelError, "giving up on request until it changes or is resynced", []any{"err", err}}
	}
	return line{}
}

func (c *Controller) observe(ev Event) {
	if c.cfg.Observe != nil {
		c.cfg.Observe(ev)
	}
}

// retriable: errors of the request itself (a status our checker refuses,
// a request for another signer) will not change by trying again.
func retriable(err error) bool {
	var se *podcert.StatusError
	return !errors.Is(err, podcert.ErrInvalidRequest) && !errors.As(err, &se) && !apierrors.IsInvalid(err)
}

func (c *Controller) count(o podcert.Outcome) {
	switch o {
	case podcert.Issued:
		c.stats.issued.Add(1)
	case podcert.Denied:
		c.stats.denied.Add(1)
	case podcert.Failed:
		c.stats.failed.Add(1)
	}
}
