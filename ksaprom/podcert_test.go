package ksaprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/podcert"
)

var podCertNames = []string{
	"ksa_podcert_requests_total", "ksa_podcert_decision_duration_seconds", "ksa_podcert_oldest_undecided_request_seconds",
	"ksa_podcert_ca_key_errors_total", "ksa_podcert_status_update_conflicts_total", "ksa_podcert_status_update_errors_total",
	"ksa_podcert_trust_bundle_updates_total",
}

// TestPodCertMetrics scrapes every pod-certificate metric after a few
// events: decisions by outcome and reason (every reason of podcert's
// signer present from the start, any other counted as "other"), their
// latency, the counters, and the oldest undecided request's age by the
// injected clock.
func TestPodCertMetrics(t *testing.T) {
	now := time.Unix(1700000000, 0)
	var oldest time.Time
	reg := prometheus.NewPedanticRegistry()
	m, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg, Buckets: []float64{0.01},
		Now: func() time.Time { return now }, OldestUndecided: func() time.Time { return oldest }})
	require.NoError(t, err)

	zero := `# HELP ksa_podcert_oldest_undecided_request_seconds Age of the oldest PodCertificateRequest seen and not yet decided; 0 when every request is decided.
# TYPE ksa_podcert_oldest_undecided_request_seconds gauge
ksa_podcert_oldest_undecided_request_seconds 0
# HELP ksa_podcert_requests_total PodCertificateRequests decided, by outcome (issued, denied, failed) and the reason of the condition written.
# TYPE ksa_podcert_requests_total counter
ksa_podcert_requests_total{outcome="denied",reason="InvalidUnverifiedUserAnnotations"} 0
ksa_podcert_requests_total{outcome="denied",reason="UnsupportedKeyType"} 0
ksa_podcert_requests_total{outcome="failed",reason="CAUnavailable"} 0
ksa_podcert_requests_total{outcome="failed",reason="InvalidRequest"} 0
ksa_podcert_requests_total{outcome="issued",reason="Issued"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(zero), "ksa_podcert_requests_total", "ksa_podcert_oldest_undecided_request_seconds"))

	oldest = now.Add(-90 * time.Second)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Issued, Reason: podcert.ReasonIssued}, 3*time.Millisecond)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Issued, Reason: podcert.ReasonIssued}, 20*time.Millisecond)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Denied, Reason: podcert.ReasonInvalidUnverifiedUserAnnotations}, 0)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Failed, Reason: "Something a signer made up"}, 0)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Denied, Reason: podcert.ReasonIssued}, 0) // a reason of another outcome
	m.ObserveDecision(&podcert.Decision{Reason: podcert.ReasonIssued}, 0)                          // no outcome: not a decision
	m.ObserveDecision(nil, 0)
	for range 3 {
		m.ObserveCAKeyError()
	}
	m.ObserveConflict()
	m.ObserveStatusError()
	m.ObserveStatusError()
	m.ObserveTrustBundleUpdate()

	want := `# HELP ksa_podcert_ca_key_errors_total Signatures the CA key failed to make, for certificates or probes; the requests are tried again.
# TYPE ksa_podcert_ca_key_errors_total counter
ksa_podcert_ca_key_errors_total 3
# HELP ksa_podcert_decision_duration_seconds Time a decision took, signing and status write included, by outcome.
# TYPE ksa_podcert_decision_duration_seconds histogram
ksa_podcert_decision_duration_seconds_bucket{outcome="denied",le="0.01"} 2
ksa_podcert_decision_duration_seconds_bucket{outcome="denied",le="+Inf"} 2
ksa_podcert_decision_duration_seconds_sum{outcome="denied"} 0
ksa_podcert_decision_duration_seconds_count{outcome="denied"} 2
ksa_podcert_decision_duration_seconds_bucket{outcome="failed",le="0.01"} 1
ksa_podcert_decision_duration_seconds_bucket{outcome="failed",le="+Inf"} 1
ksa_podcert_decision_duration_seconds_sum{outcome="failed"} 0
ksa_podcert_decision_duration_seconds_count{outcome="failed"} 1
ksa_podcert_decision_duration_seconds_bucket{outcome="issued",le="0.01"} 1
ksa_podcert_decision_duration_seconds_bucket{outcome="issued",le="+Inf"} 2
ksa_podcert_decision_duration_seconds_sum{outcome="issued"} 0.023
ksa_podcert_decision_duration_seconds_count{outcome="issued"} 2
# HELP ksa_podcert_oldest_undecided_request_seconds Age of the oldest PodCertificateRequest seen and not yet decided; 0 when every request is decided.
# TYPE ksa_podcert_oldest_undecided_request_seconds gauge
ksa_podcert_oldest_undecided_request_seconds 90
# HELP ksa_podcert_requests_total PodCertificateRequests decided, by outcome (issued, denied, failed) and the reason of the condition written.
# TYPE ksa_podcert_requests_total counter
ksa_podcert_requests_total{outcome="denied",reason="InvalidUnverifiedUserAnnotations"} 1
ksa_podcert_requests_total{outcome="denied",reason="UnsupportedKeyType"} 0
ksa_podcert_requests_total{outcome="denied",reason="other"} 1
ksa_podcert_requests_total{outcome="failed",reason="CAUnavailable"} 0
ksa_podcert_requests_total{outcome="failed",reason="InvalidRequest"} 0
ksa_podcert_requests_total{outcome="failed",reason="other"} 1
ksa_podcert_requests_total{outcome="issued",reason="Issued"} 2
# HELP ksa_podcert_status_update_conflicts_total Status writes the API server refused because the request had changed; the request is read again.
# TYPE ksa_podcert_status_update_conflicts_total counter
ksa_podcert_status_update_conflicts_total 1
# HELP ksa_podcert_status_update_errors_total Statuses that could not be written for another reason: refused by the API server or by the signer's own check, or no answer.
# TYPE ksa_podcert_status_update_errors_total counter
ksa_podcert_status_update_errors_total 2
# HELP ksa_podcert_trust_bundle_updates_total Writes of the signer's ClusterTrustBundle: created, or updated to the CA's certificates.
# TYPE ksa_podcert_trust_bundle_updates_total counter
ksa_podcert_trust_bundle_updates_total 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), podCertNames...))

	// A request created after the clock's time (the API server's clock
	// ahead of ours) is no negative age.
	oldest = now.Add(time.Second)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(zero), "ksa_podcert_oldest_undecided_request_seconds"))
}

// TestPodCertLeader: the leader gauge follows Leading when gathered.
func TestPodCertLeader(t *testing.T) {
	var leading bool
	reg := prometheus.NewPedanticRegistry()
	_, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg, Leading: func() bool { return leading }})
	require.NoError(t, err)
	gauge := func(v string) string {
		return `# HELP ksa_podcert_leader 1 when this replica publishes the trust bundle and rotates the CA (it holds the Lease of leader election), else 0; the replicas of a signer sum to 1, or to 0 while a Lease not given up expires.
# TYPE ksa_podcert_leader gauge
ksa_podcert_leader ` + v + "\n"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(gauge("0")), "ksa_podcert_leader"))
	leading = true
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(gauge("1")), "ksa_podcert_leader"))
}

// TestPodCertDefaults holds the documented defaults: the "ksa" prefix,
// the buckets (0.5 ms to about 16 s, doubling), no age gauge without
// OldestUndecided.
func TestPodCertDefaults(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg})
	require.NoError(t, err)
	m.ObserveDecision(&podcert.Decision{Outcome: podcert.Issued, Reason: podcert.ReasonIssued}, time.Millisecond)
	n, err := testutil.GatherAndCount(reg, "ksa_podcert_oldest_undecided_request_seconds", "ksa_podcert_leader")
	require.NoError(t, err)
	assert.Zero(t, n)
	families, err := reg.Gather()
	require.NoError(t, err)
	var buckets []float64
	for _, f := range families {
		if f.GetName() == "ksa_podcert_decision_duration_seconds" {
			for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
				buckets = append(buckets, b.GetUpperBound())
			}
		}
	}
	require.Equal(t, ksaprom.DefaultPodCertBuckets, buckets)
	assert.Equal(t, 0.0005, buckets[0])
	assert.InDelta(t, 16, buckets[len(buckets)-1], 0.5)
	for i := 1; i < len(buckets); i++ {
		assert.Equal(t, 2*buckets[i-1], buckets[i])
	}

	other := prometheus.NewPedanticRegistry()
	_, err = ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: other, Namespace: "pods"})
	require.NoError(t, err)
	n, err = testutil.GatherAndCount(other, "pods_podcert_requests_total")
	require.NoError(t, err)
	assert.Equal(t, 5, n)
}

func TestNewPodCertMetricsRefuses(t *testing.T) {
	_, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Equal(t, "ksaprom: PodCertConfig.Registerer is required (prometheus.NewRegistry() or prometheus.DefaultRegisterer)", err.Error())

	reg := prometheus.NewRegistry()
	_, err = ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg})
	require.NoError(t, err)
	_, err = ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig, "registered twice")
	var already prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &already)
}
