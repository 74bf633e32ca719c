package ksaprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
)

// DefaultPodCertBuckets are the decision latency histogram's buckets, in
// seconds: 0.5 ms to about 16 s, doubling. A decision is a signature
// (microseconds with a key in memory, milliseconds with an HSM or a KMS)
// and a status write to the API server (milliseconds).
var DefaultPodCertBuckets = []float64{
	0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064,
	0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
}

// podCertReasons are the reasons a podcert.Signer's decisions carry, with
// their outcome: the reason label's values besides "other".
var podCertReasons = []struct {
	outcome podcert.Outcome
	reason  string
}{
	{podcert.Issued, podcert.ReasonIssued},
	{podcert.Denied, podcert.ReasonUnsupportedKeyType},
	{podcert.Denied, podcert.ReasonInvalidUnverifiedUserAnnotations},
	{podcert.Failed, podcert.ReasonInvalidRequest},
	{podcert.Failed, podcert.ReasonCAUnavailable},
}

// PodCertConfig configures [NewPodCertMetrics]. Registerer is required;
// every other zero value applies a documented default.
type PodCertConfig struct {
	// Registerer receives the collectors (see Config.Registerer).
	Registerer prometheus.Registerer
	// Namespace prefixes the metrics; empty means DefaultNamespace.
	Namespace string
	// Buckets are the decision latency histogram's; nil means
	// DefaultPodCertBuckets.
	Buckets []float64
	// OldestUndecided returns when the oldest request the signer has seen
	// and not yet decided was created, or the zero time when there is
	// none; it is called when the metrics are gathered. Nil: the
	// oldest_undecided_request_seconds gauge is not exported.
	OldestUndecided func() time.Time
	// Now is the clock of that request's age; nil means time.Now.
	Now func() time.Time
	// Leading says whether this replica publishes the trust bundle now
	// (podcertctl's Controller.Leading: it holds the Lease of leader
	// election); it is called when the metrics are gathered. Nil: the
	// leader gauge is not exported.
	Leading func() bool
}

// PodCertMetrics exports what a pod-certificate signer (a controller
// deciding PodCertificateRequests with a podcert.Signer) reports to
// Prometheus. It is safe for concurrent use.
type PodCertMetrics struct {
	requests                       *prometheus.CounterVec
	latency                        *prometheus.HistogramVec
	caKeyErrors, conflicts, errors prometheus.Counter
	bundleUpdates                  prometheus.Counter
}

// NewPodCertMetrics registers the metrics with cfg.Registerer and returns
// them. A config it refuses, or a collector the Registerer refuses, is a
// *ksa.ConfigError.
func NewPodCertMetrics(cfg PodCertConfig) (*PodCertMetrics, error) {
	if cfg.Registerer == nil {
		return nil, &ksa.ConfigError{Field: "ksaprom.PodCertConfig.Registerer", Reason: "is required (prometheus.NewRegistry() or prometheus.DefaultRegisterer)"}
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	buckets := cfg.Buckets
	if buckets == nil {
		buckets = DefaultPodCertBuckets
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: "podcert", Name: name, Help: help})
	}
	m := &PodCertMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: "podcert", Name: "requests_total",
			Help: "PodCertificateRequests decided, by outcome (issued, denied, failed) and the reason of the condition written."}, []string{"outcome", "reason"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: "podcert", Name: "decision_duration_seconds",
			Help: "Time a decision took, signing and status write included, by outcome.", Buckets: buckets}, []string{"outcome"}),
		caKeyErrors: counter("ca_key_errors_total", "Signatures the CA key failed to make, for certificates or probes; the requests are tried again."),
		conflicts:   counter("status_update_conflicts_total", "Status writes the API server refused because the request had changed; the request is read again."),
		errors:      counter("status_update_errors_total", "Statuses that could not be written for another reason: refused by the API server or by the signer's own check, or no answer."),
		bundleUpdates: counter("trust_bundle_updates_total",
			"Writes of the signer's ClusterTrustBundle: created, or updated to the CA's certificates."),
	}
	for _, r := range podCertReasons {
		m.requests.WithLabelValues(outcomeLabel(r.outcome), r.reason)
	}
	collectors := []prometheus.Collector{m.requests, m.latency, m.caKeyErrors, m.conflicts, m.errors, m.bundleUpdates}
	if cfg.OldestUndecided != nil {
		oldest := cfg.OldestUndecided
		collectors = append(collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: "podcert", Name: "oldest_undecided_request_seconds",
			Help: "Age of the oldest PodCertificateRequest seen and not yet decided; 0 when every request is decided."},
			func() float64 {
				created := oldest()
				if created.IsZero() {
					return 0
				}
				return max(0, now().Sub(created).Seconds())
			}))
	}
	if cfg.Leading != nil {
		leading := cfg.Leading
		collectors = append(collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: "podcert", Name: "leader",
			Help: "1 when this replica publishes the trust bundle and rotates the CA (it holds the Lease of leader election), else 0; the replicas of a signer sum to 1, or to 0 while a Lease not given up expires."},
			func() float64 {
				if leading() {
					return 1
				}
				return 0
			}))
	}
	for _, c := range collectors {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, &ksa.ConfigError{Field: "ksaprom.PodCertConfig.Registerer", Reason: "refused a collector", Err: err}
		}
	}
	return m, nil
}

// ObserveDecision records a decision whose status was written, and how
// long deciding and writing took. The reason label is the condition's
// reason when a podcert.Signer gives it, else "other"; a decision without
// an outcome is not counted.
func (m *PodCertMetrics) ObserveDecision(d *podcert.Decision, took time.Duration) {
	if d == nil {
		return
	}
	outcome := outcomeLabel(d.Outcome)
	if outcome == "" {
		return
	}
	reason := "other"
	for _, r := range podCertReasons {
		if r.outcome == d.Outcome && r.reason == d.Reason {
			reason = r.reason
			break
		}
	}
	m.requests.WithLabelValues(outcome, reason).Inc()
	m.latency.WithLabelValues(outcome).Observe(took.Seconds())
}

// ObserveCAKeyError records a signature the CA key failed to make.
func (m *PodCertMetrics) ObserveCAKeyError() { m.caKeyErrors.Inc() }

// ObserveConflict records a status write refused because the request had
// changed.
func (m *PodCertMetrics) ObserveConflict() { m.conflicts.Inc() }

// ObserveStatusError records a status that could not be written for any
// other reason.
func (m *PodCertMetrics) ObserveStatusError() { m.errors.Inc() }

// ObserveTrustBundleUpdate records the trust bundle created or updated.
func (m *PodCertMetrics) ObserveTrustBundleUpdate() { m.bundleUpdates.Inc() }

// outcomeLabel is an outcome's label value, "" for none.
func outcomeLabel(o podcert.Outcome) string {
	switch o {
	case podcert.Issued:
		return "issued"
	case podcert.Denied:
		return "denied"
	case podcert.Failed:
		return "failed"
	}
	return ""
}
