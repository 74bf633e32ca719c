package ksaprom

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
)

// SignerConfig configures [NewSignerMetrics]. Registerer is required;
// every other zero value applies a documented default.
type SignerConfig struct {
	// Registerer receives the collectors. Required.
	Registerer prometheus.Registerer
	// Namespace prefixes the metrics; empty means DefaultNamespace.
	Namespace string
	// Buckets are the request duration histogram's; nil means
	// DefaultBuckets.
	Buckets []float64
	// Ring, when set, is read when the metrics are scraped: its data
	// timestamp and its keys by role.
	Ring *extsigner.Ring
}

// SignerRequest is one request an external signer answered, or one probe
// of its key store: what the grpcserver package's Event reports.
type SignerRequest struct {
	// Method is "Sign", "FetchKeys", "Metadata" or "Probe".
	Method string
	// Code is the gRPC status code answered, by name ("OK",
	// "Unavailable").
	Code string
	// KeyID is the key that signed or failed, if any.
	KeyID string
	// Err is the error answered, nil on success.
	Err error
	// Duration is how long the answer took.
	Duration time.Duration
}

// SignerMetrics exports what an external signer (extsigner and its gRPC
// server) reports, in the style of kube-apiserver's
// apiserver_externaljwt_* metrics (see the package documentation). Its
// methods are the plugs for grpcserver.Config.OnRequest,
// extsigner.RingConfig.OnChange and a ring file's reloads. It is safe for
// concurrent use.
type SignerMetrics struct {
	signs          *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	keyStoreErrors *prometheus.CounterVec
	transitions    *prometheus.CounterVec
	reloads        prometheus.Counter
	reloadErrors   prometheus.Counter
	reloadFailing  prometheus.Gauge
	lastCheck      *lastCheckCollector
	refused        prometheus.Counter
}

// NewSignerMetrics registers the signer's metrics with cfg.Registerer and
// returns them. A config it refuses, or a collector the Registerer
// refuses, is a *ksa.ConfigError.
func NewSignerMetrics(cfg SignerConfig) (*SignerMetrics, error) {
	if cfg.Registerer == nil {
		return nil, &ksa.ConfigError{Field: "ksaprom.SignerConfig.Registerer", Reason: "is required (prometheus.NewRegistry() or prometheus.DefaultRegisterer)"}
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	buckets := cfg.Buckets
	if buckets == nil {
		buckets = DefaultBuckets
	}
	const sub = "extsigner"
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, labels)
	}
	m := &SignerMetrics{
		signs: counter("sign_requests_total", "Sign requests by gRPC status code and the key that signed (or failed; empty for claims refused).", "code", "kid"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
			Help: "Time the signer took to answer, by method (Sign, FetchKeys, Metadata, and Probe: its own check of the key store) and gRPC status code.", Buckets: buckets}, []string{"method", "code"}),
		keyStoreErrors: counter("key_store_errors_total", "Signatures the key store failed (or answered with a signature the published key rejects), in Sign requests and probes, by key.", "kid"),
		transitions:    counter("ring_transitions_total", "Changes of the ring's keys or roles: cause schedule (a time its ring file wrote came) or rotation (a rotation step).", "cause"),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "ring_reloads_total",
			Help: "Ring files read again and applied."}),
		reloadErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "ring_reload_errors_total",
			Help: "Ring files read again and refused: the last good ring stays."}),
		reloadFailing: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "ring_reload_failing",
			Help: "1 while the ring file's last reload was refused and the signer serves the last good ring, else 0."}),
		lastCheck: &lastCheckCollector{desc: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "ring_last_check_timestamp_seconds"),
			"When the ring file was last read and checked to the end (Unix time), whether it changed, was applied or refused; absent before the first check. A check that hangs (a hung network file system) leaves it behind.", nil, nil)},
		refused: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "refused_connections_total",
			Help: "Connections closed at once because the peer's user ID is not allowed (or could not be read)."}),
	}
	collectors := []prometheus.Collector{m.signs, m.latency, m.keyStoreErrors, m.transitions, m.reloads, m.reloadErrors, m.reloadFailing, m.lastCheck, m.refused}
	if cfg.Ring != nil {
		collectors = append(collectors, newRingCollector(ns, cfg.Ring))
	}
	for _, c := range collectors {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, &ksa.ConfigError{Field: "ksaprom.SignerConfig.Registerer", Reason: "refused a collector", Err: err}
		}
	}
	return m, nil
}

// ObserveRequest records one request or probe: the plug for
// grpcserver.Config.OnRequest (fill a SignerRequest from its Event).
func (m *SignerMetrics) ObserveRequest(r SignerRequest) {
	m.latency.WithLabelValues(r.Method, r.Code).Observe(r.Duration.Seconds())
	if r.Method == "Sign" {
		m.signs.WithLabelValues(r.Code, r.KeyID).Inc()
	}
	if errors.Is(r.Err, extsigner.ErrSignerFailed) || errors.Is(r.Err, extsigner.ErrSelfCheck) {
		m.keyStoreErrors.WithLabelValues(r.KeyID).Inc()
	}
}

// ObserveChange records a change of the ring: the plug for
// extsigner.RingConfig.OnChange. Updates are counted by ObserveReload.
func (m *SignerMetrics) ObserveChange(c extsigner.RingChange) {
	if c.Cause != extsigner.ChangeUpdate {
		m.transitions.WithLabelValues(c.Cause).Inc()
	}
}

// ObserveReload records a reload of the ring file: nil when it was
// applied, the error when it was refused (the last good ring stays).
func (m *SignerMetrics) ObserveReload(err error) {
	if err != nil {
		m.reloadErrors.Inc()
		m.reloadFailing.Set(1)
		return
	}
	m.reloads.Inc()
	m.reloadFailing.Set(0)
}

// ObserveRingCheck records a check of the ring file that ran to the end
// at t, whatever it found (unchanged, applied or refused).
func (m *SignerMetrics) ObserveRingCheck(t time.Time) { m.lastCheck.nanos.Store(t.UnixNano()) }

// ObserveRefusedConnection records a connection the signer closed at once
// because its peer is not allowed: the plug for
// extsigner.ListenConfig.OnRefused.
func (m *SignerMetrics) ObserveRefusedConnection() { m.refused.Inc() }

// lastCheckCollector exports the time of the last check of the ring
// file, once there was one.
type lastCheckCollector struct {
	desc  *prometheus.Desc
	nanos atomic.Int64
}

func (c *lastCheckCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *lastCheckCollector) Collect(ch chan<- prometheus.Metric) {
	if n := c.nanos.Load(); n != 0 {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n)/1e9)
	}
}

// ringCollector exports a ring's data timestamp and keys by role, read
// when scraped.
type ringCollector struct {
	ring  *extsigner.Ring
	stamp *prometheus.Desc
	keys  *prometheus.Desc
}

func newRingCollector(ns string, ring *extsigner.Ring) *ringCollector {
	return &ringCollector{
		ring: ring,
		stamp: prometheus.NewDesc(prometheus.BuildFQName(ns, "extsigner", "data_timestamp_seconds"),
			"The data timestamp FetchKeys answers (Unix time): when the published key set last changed.", nil, nil),
		keys: prometheus.NewDesc(prometheus.BuildFQName(ns, "extsigner", "keys"),
			"Keys of the ring by role (primary, staged, previous, verify-only).", []string{"role"}, nil),
	}
}

// ringRoles are the roles exported, each always (zero when no key has it).
var ringRoles = []extsigner.Role{extsigner.RolePrimary, extsigner.RoleStaged, extsigner.RolePrevious, extsigner.RoleVerifyOnly}

func (c *ringCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.stamp
	ch <- c.keys
}

func (c *ringCollector) Collect(ch chan<- prometheus.Metric) {
	set := c.ring.KeySet()
	ch <- prometheus.MustNewConstMetric(c.stamp, prometheus.GaugeValue, float64(set.DataTimestamp.UnixNano())/1e9)
	counts := map[extsigner.Role]int{}
	for _, k := range c.ring.Keys() {
		counts[k.Role]++
	}
	for _, role := range ringRoles {
		ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(counts[role]), role.String())
	}
}
