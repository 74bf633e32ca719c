package ksaprom

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Defaults of Config.
const (
	// DefaultNamespace prefixes ksa's own metrics: ksa_token_validations_total.
	DefaultNamespace = "ksa"
	// DefaultMaxKeySets bounds how many key set URLs get series of their
	// own; fetches of further URLs are counted under url="other".
	DefaultMaxKeySets = 32
)

// DefaultBuckets are the latency histogram's buckets, in seconds: 25 µs to
// about 1.6 s, doubling; a local validation takes tens of microseconds, a
// validation that fetches keys or looks objects up, milliseconds.
var DefaultBuckets = []float64{
	0.000025, 0.00005, 0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032,
	0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096, 0.8192, 1.6384,
}

// Config configures [NewMetrics]. Registerer is required; every other zero value
// applies a documented default.
type Config struct {
	// Registerer receives the collectors: a prometheus.NewRegistry() of the
	// program, or prometheus.DefaultRegisterer when it is the one served.
	// Required: nothing is registered globally behind the caller's back.
	Registerer prometheus.Registerer
	// Namespace prefixes ksa's own metrics; empty means DefaultNamespace.
	// Kubernetes' serviceaccount_* names are never prefixed.
	Namespace string
	// Buckets are the latency histogram's; nil means DefaultBuckets.
	Buckets []float64
	// MaxKeySets bounds the key set URLs with series of their own; zero
	// means DefaultMaxKeySets.
	MaxKeySets int
	// Now is the clock of the key-set age; nil means time.Now.
	Now func() time.Time
}

// Metrics exports what validators and key sets report to Prometheus. Pass
// its Observe method as tokens.ValidatorConfig.OnValidate (or
// oidc.VerifierConfig.OnValidate) and ObserveFetch as OnFetch. It is safe
// for concurrent use.
type Metrics struct {
	// Kubernetes' names and meaning (pkg/serviceaccount of kube-apiserver).
	legacy, stale, valid prometheus.Counter

	validations *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	fetches     *prometheus.CounterVec
	keySets     *keySetCollector
}

// NewMetrics registers the metrics with cfg.Registerer and returns them. A config
// it refuses, or a collector the Registerer refuses, is a *ksa.ConfigError.
func NewMetrics(cfg Config) (*Metrics, error) {
	switch {
	case cfg.Registerer == nil:
		return nil, &ksa.ConfigError{Field: "ksaprom.Config.Registerer", Reason: "is required (prometheus.NewRegistry() or prometheus.DefaultRegisterer)"}
	case cfg.MaxKeySets < 0:
		return nil, &ksa.ConfigError{Field: "ksaprom.Config.MaxKeySets", Reason: "is negative"}
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	buckets := cfg.Buckets
	if buckets == nil {
		buckets = DefaultBuckets
	}
	maxSets := cfg.MaxKeySets
	if maxSets == 0 {
		maxSets = DefaultMaxKeySets
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	sa := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "serviceaccount", Name: name, Help: help})
	}
	m := &Metrics{
		legacy: sa("legacy_tokens_total", "Cumulative legacy service account tokens used: tokens without an audience, counted once their signature verified, as kube-apiserver counts them."),
		stale:  sa("stale_tokens_total", "Cumulative stale projected service account tokens used: valid tokens used past their warnafter time."),
		valid:  sa("valid_tokens_total", "Cumulative valid projected service account tokens used: valid tokens carrying warnafter, used before it."),
		validations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: "token", Name: "validations_total",
			Help: "Token validations by result (valid, refused), reason of a refusal and whether the result cache answered."}, []string{"result", "reason", "cached"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: "token", Name: "validation_duration_seconds",
			Help: "Time a token validation took, by result.", Buckets: buckets}, []string{"result"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: "jwks", Name: "fetches_total",
			Help: "Key set fetches by URL, reason (initial, expired, unknown-kid, refresh) and result (ok, error)."}, []string{"url", "reason", "result"}),
		keySets: newKeySetCollector(ns, maxSets, now),
	}
	for _, c := range []prometheus.Collector{m.legacy, m.stale, m.valid, m.validations, m.latency, m.fetches, m.keySets} {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, &ksa.ConfigError{Field: "ksaprom.Config.Registerer", Reason: "refused a collector", Err: err}
		}
	}
	return m, nil
}

// Observe records one validation: the plug for OnValidate.
//
// Kubernetes' counters follow kube-apiserver: a token without audience is
// legacy once its signature verified (whatever happens next); stale and
// valid count accepted tokens carrying warnafter, past it or not. Answers
// of the result cache are not counted there, as kube-apiserver's token
// cache sits in front of the authenticator that counts. The counters of
// legacy Secret-based tokens (legacy_manual_token_uses_total,
// legacy_auto_token_uses_total, invalid_legacy_auto_token_uses_total) are
// not exported: telling auto-generated Secrets from manual ones needs the
// service account's list of secrets, which validation does not read.
func (m *Metrics) Observe(ev tokens.ValidationEvent) {
	result := "valid"
	if ev.Err != nil {
		result = "refused"
	}
	cached := "false"
	if ev.Cached {
		cached = "true"
	}
	m.validations.WithLabelValues(result, ReasonName(ev.Err), cached).Inc()
	m.latency.WithLabelValues(result).Observe(ev.Duration.Seconds())
	if ev.Cached {
		return
	}
	if ev.NoAudience && signed(ev) {
		m.legacy.Inc()
	}
	if ev.Err == nil && ev.WarnAfter {
		if ev.Stale {
			m.stale.Inc()
		} else {
			m.valid.Inc()
		}
	}
}

// ObserveFetch records one key set fetch: the plug for OnFetch.
func (m *Metrics) ObserveFetch(ev jwks.FetchEvent) {
	url := m.keySets.record(ev)
	result := "ok"
	if ev.Err != nil {
		result = "error"
	}
	m.fetches.WithLabelValues(url, string(ev.Reason), result).Inc()
}

// keySetCollector exports each key set's last successful fetch, its age
// and its key count, computed when scraped.
type keySetCollector struct {
	now     func() time.Time
	max     int
	last    *prometheus.Desc
	age     *prometheus.Desc
	keys    *prometheus.Desc
	mu      sync.Mutex
	byURL   map[string]*keySetState
	ordered []string
}

type keySetState struct {
	lastSuccess time.Time
	keys        int
}

func newKeySetCollector(ns string, maxSets int, now func() time.Time) *keySetCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "jwks", name), help, []string{"url"}, nil)
	}
	return &keySetCollector{
		now: now, max: maxSets, byURL: map[string]*keySetState{},
		last: desc("last_success_timestamp_seconds", "When the key set was last fetched successfully (Unix time)."),
		age:  desc("age_seconds", "Time since the key set was last fetched successfully."),
		keys: desc("keys", "Usable keys in the key set's last successful fetch."),
	}
}

// record notes a fetch and returns the URL label it counts under.
func (c *keySetCollector) record(ev jwks.FetchEvent) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.byURL[ev.URL]
	if !ok {
		if len(c.byURL) >= c.max {
			return "other"
		}
		st = &keySetState{}
		c.byURL[ev.URL] = st
		c.ordered = append(c.ordered, ev.URL)
	}
	if ev.Err == nil {
		st.lastSuccess = ev.Start.Add(ev.Duration)
		st.keys = ev.Keys
	}
	return ev.URL
}

func (c *keySetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.last
	ch <- c.age
	ch <- c.keys
}

func (c *keySetCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, url := range c.ordered {
		st := c.byURL[url]
		if st.lastSuccess.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, float64(st.lastSuccess.UnixNano())/1e9, url)
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, now.Sub(st.lastSuccess).Seconds(), url)
		ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(st.keys), url)
	}
}
