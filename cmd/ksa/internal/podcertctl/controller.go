package podcertctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/ksa-go/ksa/podcert"
)

// API versions of certificates.k8s.io the controller speaks.
const (
	V1      = "v1"
	V1beta1 = "v1beta1"
)

// Defaults of [Config].
const (
	// DefaultWorkers is how many requests are decided at once.
	DefaultWorkers = 4
	// DefaultMaxRetries is how often a request whose status cannot be
	// written is tried again before the controller gives up on it (until
	// the next resync or change).
	DefaultMaxRetries = 8
	// DefaultResync is how often every cached request is looked at again.
	DefaultResync = 10 * time.Minute
)

// writeTimeout bounds one status write.
const writeTimeout = 30 * time.Second

// Config configures a Controller. Client and Signer are required; every
// other zero value is a documented default.
type Config struct {
	// Client talks to the API server, as an identity holding the RBAC of
	// [Manifests]: [NewRESTClient] of a rest.Config.
	Client Client
	// Signer decides the requests; its signer name selects them.
	Signer *podcert.Signer
	// APIVersion is V1 or V1beta1. Empty: V1 when the API server serves
	// podcertificaterequests in certificates.k8s.io/v1, else V1beta1.
	APIVersion string
	// TrustBundleName is the ClusterTrustBundle the CA is published in.
	// Empty: [DefaultTrustBundleName] of the signer name.
	TrustBundleName string
	// NoTrustBundle turns publishing off (the CA is distributed otherwise).
	NoTrustBundle bool
	// Workers is how many requests are decided at once. Zero:
	// [DefaultWorkers].
	Workers int
	// MaxRetries bounds the attempts at writing one request's status.
	// Zero: [DefaultMaxRetries].
	MaxRetries int
	// Resync is the informer's resync period. Zero: [DefaultResync].
	Resync time.Duration
	// Log receives one line per decision and per error. Nil: none.
	Log *slog.Logger
	// Observe, when set, is called after each request is handled, from the
	// worker that handled it (for metrics, or a test waiting for a
	// decision). It must not block for long.
	Observe func(Event)
}

// Event is one request handled.
type Event struct {
	// Key is the request's namespace/name.
	Key string
	// Decision is what was decided and written; nil when the request was
	// skipped (already decided, another signer's, gone).
	Decision *podcert.Decision
	// Err is why the status could not be written; the request is tried
	// again if Retry.
	Err   error
	Retry bool
}

// DefaultTrustBundleName is the ClusterTrustBundle name for a signer: the
// API server requires a signer's bundles to be named with the signer name
// ("/" turned into ":") and a colon as prefix.
func DefaultTrustBundleName(signerName string) string {
	return strings.ReplaceAll(signerName, "/", ":") + ":primary-bundle"
}

// Stats counts what a Controller did.
type Stats struct {
	// Issued, Denied and Failed count the statuses written.
	Issued, Denied, Failed int64
	// Conflicts counts status writes the API server refused because the
	// object had changed; the request was read again.
	Conflicts int64
	// Errors counts other failures to write a status.
	Errors int64
}

// Controller decides the PodCertificateRequests of one signer name.
type Controller struct {
	cfg   Config
	log   *slog.Logger
	stats struct{ issued, denied, failed, conflicts, errors atomic.Int64 }
}

// ConfigError reports a Config that cannot run.
type ConfigError struct {
	Field, Reason string
	// Err is the cause, if any.
	Err error
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("podcertctl: config %s: %s: %v", e.Field, e.Reason, e.Err)
	}
	return fmt.Sprintf("podcertctl: config %s: %s", e.Field, e.Reason)
}

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// New checks cfg and returns a Controller.
func New(cfg Config) (*Controller, error) {
	switch {
	case cfg.Client == nil:
		return nil, &ConfigError{Field: "Client", Reason: "is nil"}
	case cfg.Signer == nil:
		return nil, &ConfigError{Field: "Signer", Reason: "is nil"}
	case cfg.APIVersion != "" && cfg.APIVersion != V1 && cfg.APIVersion != V1beta1:
		return nil, &ConfigError{Field: "APIVersion", Reason: fmt.Sprintf("%q is not %q or %q", cfg.APIVersion, V1, V1beta1)}
	case cfg.Workers < 0, cfg.MaxRetries < 0, cfg.Resync < 0:
		return nil, &ConfigError{Field: "Workers, MaxRetries or Resync", Reason: "is negative"}
	}
	if cfg.TrustBundleName == "" {
		cfg.TrustBundleName = DefaultTrustBundleName(cfg.Signer.SignerName())
	} else if prefix := strings.ReplaceAll(cfg.Signer.SignerName(), "/", ":") + ":"; !strings.HasPrefix(cfg.TrustBundleName, prefix) {
		return nil, &ConfigError{Field: "TrustBundleName", Reason: fmt.Sprintf("%q does not start with %q, as the API server requires for the signer's bundles", cfg.TrustBundleName, prefix)}
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.Resync == 0 {
		cfg.Resync = DefaultResync
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{cfg: cfg, log: log}, nil
}

// Stats returns the counts so far.
func (c *Controller) Stats() Stats {
	return Stats{Issued: c.stats.issued.Load(), Denied: c.stats.denied.Load(), Failed: c.stats.failed.Load(),
		Conflicts: c.stats.conflicts.Load(), Errors: c.stats.errors.Load()}
}

// APIVersion returns the version Run speaks: the configured one, or the
// one discovery finds.
func (c *Controller) APIVersion() (string, error) {
	if c.cfg.APIVersion != "" {
		return c.cfg.APIVersion, nil
	}
	res, err := c.cfg.Client.ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("podcertctl: discovering certificates.k8s.io/v1: %w", err)
	}
	if res != nil {
		for _, r := range res.APIResources {
			if r.Name == "podcertificaterequests" {
				return V1, nil
			}
		}
	}
	return V1beta1, nil
}

// Run publishes the trust bundle, then decides requests until ctx ends. It
// returns nil when ctx ends, once the status writes under way are done, or
// the error that kept it from starting.
func (c *Controller) Run(ctx context.Context) error {
	version, err := c.APIVersion()
	if err != nil {
		return err
	}
	api := apiFor(version)
	if !c.cfg.NoTrustBundle {
		if err := api.publish(ctx, c.cfg.Client, c.cfg.TrustBundleName, c.cfg.Signer.SignerName(), string(c.cfg.Signer.TrustBundle())); err != nil {
			return fmt.Errorf("podcertctl: publishing ClusterTrustBundle %s: %w", c.cfg.TrustBundleName, err)
		}
		c.log.Info("trust bundle published", "name", c.cfg.TrustBundleName, "version", version)
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	inf := api.informer(c.cfg.Client, c.cfg.Signer.SignerName(), c.cfg.Resync)
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return fmt.Errorf("podcertctl: watching requests: %w", err)
	}
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
			for c.next(writes, queue, inf.GetStore(), api) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// next decides one queued request; false when the queue is shut down.
func (c *Controller) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], store cache.Store, api versionAPI) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	obj, ok, err := store.GetByKey(key)
	if err != nil || !ok {
		queue.Forget(key)
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	d, err := api.decide(ctx, c.cfg.Client, c.cfg.Signer, obj)
	ev := Event{Key: key, Decision: d, Err: err}
	switch {
	case err == nil && d == nil: // nothing to do
		queue.Forget(key)
	case err == nil:
		queue.Forget(key)
		c.count(d.Outcome)
		c.log.Info("decided", "request", key, "outcome", d.Outcome.String(), "reason", d.Reason, "message", d.Message)
	case apierrors.IsNotFound(err):
		ev.Decision, ev.Err = nil, nil
		queue.Forget(key)
	case apierrors.IsConflict(err):
		c.stats.conflicts.Add(1)
		ev.Decision, ev.Retry = nil, true
		queue.AddRateLimited(key)
	case queue.NumRequeues(key) < c.cfg.MaxRetries && retriable(err):
		c.stats.errors.Add(1)
		c.log.Error("writing status", "request", key, "err", err)
		ev.Decision, ev.Retry = nil, true
		queue.AddRateLimited(key)
	default:
		c.stats.errors.Add(1)
		c.log.Error("giving up on request", "request", key, "err", err)
		ev.Decision = nil
		queue.Forget(key)
	}
	if c.cfg.Observe != nil {
		c.cfg.Observe(ev)
	}
	return true
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
