package podcertctl

import (
	"context"
	"crypto"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

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
	// the next resync or change). A CA key that fails to sign does not
	// count: that request is tried again however often.
	DefaultMaxRetries = 8
	// DefaultResync is how often every cached request is looked at again.
	DefaultResync = 10 * time.Minute
	// DefaultCAProbeInterval is how recent the CA key's last good
	// signature must be for [Controller.Ready] to take it as working
	// without a probe signature.
	DefaultCAProbeInterval = 30 * time.Second
	// DefaultAPICheckInterval is how long [Controller.Ready] keeps the
	// answer of its list of the requests: however often readiness is
	// asked, the API server is asked at most once per interval.
	DefaultAPICheckInterval = 10 * time.Second
)

// Retry delays: a request is tried again after RetryDelay, doubling with
// each failure up to MaxRetryDelay; all retries together are held to ten
// a second.
const (
	RetryDelay    = 5 * time.Millisecond
	MaxRetryDelay = 30 * time.Second
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
	// CAKey is the key Signer signs with, which [Controller.Ready] has sign
	// a probe digest when no signature of it succeeded within
	// CAProbeInterval. Nil: Ready judges the key by the certificates
	// signed alone (ready until one fails).
	CAKey crypto.Signer
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
	// CAProbeInterval is how recent the CA key's last good signature (a
	// certificate or a probe) must be for Ready. Zero:
	// [DefaultCAProbeInterval].
	CAProbeInterval time.Duration
	// APICheckInterval is how long Ready keeps the answer (or the error)
	// of its list of the requests before it lists them again: readiness
	// asked a thousand times costs the API server one request per
	// interval, through the client's rate limiter the status writes share.
	// Zero: [DefaultAPICheckInterval].
	APICheckInterval time.Duration
	// Next, when set, is the CA that takes over from Signer's: see
	// [Rotation]. It needs the trust bundle published.
	Next *Rotation
	// LeaderElection, when set, has the replicas of the signer elect the
	// one that publishes the trust bundle and rotates the CA, the holder
	// of a Lease; every replica decides requests. Nil: this replica
	// publishes (one replica, or replicas of the same configuration; see
	// the package's "Replicas and leader election"). It needs the trust
	// bundle published and a Client that is a [LeaseClient].
	LeaderElection *LeaderElectionConfig
	// Now is the clock of durations, request ages, probe times and the
	// rotation's phases. Nil: time.Now.
	Now func() time.Time
	// After waits for a duration of Now's clock, as time.After does: the
	// rotation's timer. Nil: time.After.
	After func(time.Duration) <-chan time.Time
	// Log receives one line per decision and per error, each naming the
	// request by namespace, name and UID. Nil: none.
	Log *slog.Logger
	// Observe, when set, is called with each [Event], from the goroutine
	// that caused it (for metrics, or a test waiting for a decision). It
	// must not block for long.
	Observe func(Event)
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
	// object had changed (another replica decided it first, or the cache
	// was stale); the request was read again.
	Conflicts int64
	// Deferred counts requests put off because the CA that signs now is
	// not in the published trust bundle as last read
	// ([ErrCANotPublished]).
	Deferred int64
	// CAKeyErrors counts signatures the CA key failed to make
	// (certificates and probes).
	CAKeyErrors int64
	// Errors counts other failures to write a status.
	Errors int64
}

// Controller decides the PodCertificateRequests of one signer name.
type Controller struct {
	cfg   Config
	log   *slog.Logger
	stats struct{ issued, denied, failed, conflicts, deferred, caKeyErrors, errors atomic.Int64 }
	// watch is set by Run once its informer is built.
	watch atomic.Pointer[watching]
	ca    caHealth
	api   apiCheck
	// rot is the checked Config.Next.
	rot *caRotation
	// lease is the leader election of Config.LeaderElection; nil without.
	lease *elector
	// view is the published trust bundle as last read or written; rounds
	// serializes its reads and writes (keep and a term's start).
	view   atomic.Pointer[bundleView]
	rounds sync.Mutex
}

// watching is what Run watches: readiness and the age of the oldest
// request read it.
type watching struct {
	api    versionAPI
	store  cache.Store
	synced cache.InformerSynced
}

// New checks cfg and returns a Controller. A config it refuses is a
// *ksa.ConfigError.
func New(cfg Config) (*Controller, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var rot *caRotation
	if cfg.Next != nil {
		var err error
		if rot, err = checkRotation(cfg.Next, cfg.Signer, cfg.NoTrustBundle); err != nil {
			return nil, err
		}
	}
	var lease *elector
	if le := cfg.LeaderElection; le != nil {
		if cfg.NoTrustBundle {
			return nil, configError("LeaderElection", "elects the replica that publishes the trust bundle, and NoTrustBundle turns publishing off")
		}
		lc, ok := cfg.Client.(LeaseClient)
		if !ok {
			return nil, configError("LeaderElection", fmt.Sprintf("needs a Client with Leases (a LeaseClient), and %T is not one", cfg.Client))
		}
		lcfg, err := leaseConfig(*le, cfg.Signer.SignerName())
		if err != nil {
			return nil, err
		}
		lease = &elector{cfg: lcfg, leases: lc.Leases(lcfg.Namespace)}
		cfg.LeaderElection = &lcfg
	}
	cfg.setDefaults()
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{cfg: cfg, log: log, rot: rot, lease: lease}, nil
}

// check checks the fields of cfg but Next.
func (cfg *Config) check() error {
	switch {
	case cfg.Client == nil:
		return configError("Client", "is nil")
	case cfg.Signer == nil:
		return configError("Signer", "is nil")
	case cfg.APIVersion != "" && cfg.APIVersion != V1 && cfg.APIVersion != V1beta1:
		return configError("APIVersion", fmt.Sprintf("%q is not %q or %q", cfg.APIVersion, V1, V1beta1))
	case cfg.Workers < 0:
		return configError("Workers", "is negative")
	case cfg.MaxRetries < 0:
		return configError("MaxRetries", "is negative")
	case cfg.Resync < 0:
		return configError("Resync", "is negative")
	case cfg.CAProbeInterval < 0:
		return configError("CAProbeInterval", "is negative")
	case cfg.APICheckInterval < 0:
		return configError("APICheckInterval", "is negative")
	}
	if err := checkSignerName("podcertctl.Config.Signer", cfg.Signer.SignerName()); err != nil {
		return err
	}
	if prefix := strings.ReplaceAll(cfg.Signer.SignerName(), "/", ":") + ":"; cfg.TrustBundleName != "" && !strings.HasPrefix(cfg.TrustBundleName, prefix) {
		return configError("TrustBundleName", fmt.Sprintf("%q does not start with %q, as the API server requires for the signer's bundles", cfg.TrustBundleName, prefix))
	}
	return nil
}

// setDefaults sets the documented default of each zero field.
func (cfg *Config) setDefaults() {
	if cfg.TrustBundleName == "" {
		cfg.TrustBundleName = DefaultTrustBundleName(cfg.Signer.SignerName())
	}
	for _, d := range []struct {
		v   *int
		def int
	}{{&cfg.Workers, DefaultWorkers}, {&cfg.MaxRetries, DefaultMaxRetries}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.Resync, DefaultResync}, {&cfg.CAProbeInterval, DefaultCAProbeInterval}, {&cfg.APICheckInterval, DefaultAPICheckInterval}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
}

// Stats returns the counts so far.
func (c *Controller) Stats() Stats {
	return Stats{Issued: c.stats.issued.Load(), Denied: c.stats.denied.Load(), Failed: c.stats.failed.Load(),
		Conflicts: c.stats.conflicts.Load(), Deferred: c.stats.deferred.Load(), CAKeyErrors: c.stats.caKeyErrors.Load(), Errors: c.stats.errors.Load()}
}

// APIVersion returns the version Run speaks: the configured one, or the
// one discovery finds.
func (c *Controller) APIVersion() (string, error) {
	if c.cfg.APIVersion != "" {
		return c.cfg.APIVersion, nil
	}
	res, err := c.cfg.Client.ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	if err != nil && !apierrors.IsNotFound(err) {
		return "", wrap(err, "discovering certificates.k8s.io/v1")
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

// Run reads the published trust bundle and, unless leader election
// elects another replica, publishes it; then it decides requests until ctx
// ends, following the published bundle meanwhile (and, as its writer,
// repairing it and rotating the CA). With [Config.LeaderElection] it
// holds or tries to hold the Lease meanwhile, and gives it up as it
// returns. It returns nil when ctx ends, once the status writes under way
// are done, or the error that kept it from starting.
func (c *Controller) Run(ctx context.Context) error {
	version, err := c.APIVersion()
	if err != nil {
		return err
	}
	api := apiFor(version)
	if !c.cfg.NoTrustBundle {
		if err := c.begin(ctx, api, version); err != nil {
			return err
		}
		defer c.startKeeping(ctx, api, version)()
		if c.lease != nil {
			defer c.startElecting(ctx, api, version)()
		}
	}
	return c.work(ctx, api, version)
}

// startElecting starts leader election (elect), and returns the function
// that stops it, once Run's ctx has ended, and waits for it: its term
// ends with ctx, then it gives the Lease up.
func (c *Controller) startElecting(ctx context.Context, api versionAPI, version string) (stop func()) {
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.elect(ectx, ctx, c.acquired(api, version))
	}()
	return func() {
		cancel()
		<-done
	}
}
