package ksaprom_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/ksaprom"
)

// TestSignerMetrics: each hook feeds its metrics, with the documented
// names, types and labels.
func TestSignerMetrics(t *testing.T) {
	primaryKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	legacy, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	legacyKey, err := jwks.NewKey(legacy.Public())
	require.NoError(t, err)
	legacyKey.ExcludeFromDiscovery = true
	stamp := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Schedule: []extsigner.ScheduledKey{{Signer: primaryKey, Primary: time.Unix(0, 0)}, {Key: legacyKey, Published: stamp}},
		Now:      func() time.Time { return stamp.Add(time.Hour) },
	})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	m, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg, Ring: ring, Buckets: []float64{0.001}})
	require.NoError(t, err)

	kmsDown := &extsigner.SignError{KeyID: "k1", Kind: extsigner.ErrSignerFailed, Err: errors.New("kms: down")}
	m.ObserveRequest(ksaprom.SignerRequest{Method: "Sign", Code: "OK", KeyID: "k1", Duration: 500 * time.Microsecond})
	m.ObserveRequest(ksaprom.SignerRequest{Method: "Sign", Code: "OK", KeyID: "k1", Duration: 2 * time.Millisecond})
	m.ObserveRequest(ksaprom.SignerRequest{Method: "Sign", Code: "Unavailable", KeyID: "k1", Err: kmsDown, Duration: time.Millisecond / 2})
	m.ObserveRequest(ksaprom.SignerRequest{Method: "Sign", Code: "InvalidArgument", Err: extsigner.ErrInvalidClaims})
	m.ObserveRequest(ksaprom.SignerRequest{Method: "Probe", Code: "Unavailable", KeyID: "k1", Err: kmsDown})
	m.ObserveRequest(ksaprom.SignerRequest{Method: "FetchKeys", Code: "OK"})
	m.ObserveChange(extsigner.RingChange{Cause: extsigner.ChangeSchedule})
	m.ObserveChange(extsigner.RingChange{Cause: extsigner.ChangeUpdate})
	m.ObserveReload(nil)
	m.ObserveReload(errors.New("extsigner: ring file: not a JSON object"))
	m.ObserveRefusedConnection()
	m.ObserveRefusedConnection()

	want := `# HELP ksa_extsigner_data_timestamp_seconds The data timestamp FetchKeys answers (Unix time): when the published key set last changed.
# TYPE ksa_extsigner_data_timestamp_seconds gauge
ksa_extsigner_data_timestamp_seconds 1.8038916e+09
# HELP ksa_extsigner_key_store_errors_total Signatures the key store failed (or answered with a signature the published key rejects), in Sign requests and probes, by key.
# TYPE ksa_extsigner_key_store_errors_total counter
ksa_extsigner_key_store_errors_total{kid="k1"} 2
# HELP ksa_extsigner_keys Keys of the ring by role (primary, staged, previous, verify-only).
# TYPE ksa_extsigner_keys gauge
ksa_extsigner_keys{role="previous"} 0
ksa_extsigner_keys{role="primary"} 1
ksa_extsigner_keys{role="staged"} 0
ksa_extsigner_keys{role="verify-only"} 1
# HELP ksa_extsigner_refused_connections_total Connections closed at once because the peer's user ID is not allowed (or could not be read).
# TYPE ksa_extsigner_refused_connections_total counter
ksa_extsigner_refused_connections_total 2
# HELP ksa_extsigner_request_duration_seconds Time the signer took to answer, by method (Sign, FetchKeys, Metadata, and Probe: its own check of the key store) and gRPC status code.
# TYPE ksa_extsigner_request_duration_seconds histogram
ksa_extsigner_request_duration_seconds_bucket{code="InvalidArgument",method="Sign",le="0.001"} 1
ksa_extsigner_request_duration_seconds_bucket{code="InvalidArgument",method="Sign",le="+Inf"} 1
ksa_extsigner_request_duration_seconds_sum{code="InvalidArgument",method="Sign"} 0
ksa_extsigner_request_duration_seconds_count{code="InvalidArgument",method="Sign"} 1
ksa_extsigner_request_duration_seconds_bucket{code="OK",method="FetchKeys",le="0.001"} 1
ksa_extsigner_request_duration_seconds_bucket{code="OK",method="FetchKeys",le="+Inf"} 1
ksa_extsigner_request_duration_seconds_sum{code="OK",method="FetchKeys"} 0
ksa_extsigner_request_duration_seconds_count{code="OK",method="FetchKeys"} 1
ksa_extsigner_request_duration_seconds_bucket{code="OK",method="Sign",le="0.001"} 1
ksa_extsigner_request_duration_seconds_bucket{code="OK",method="Sign",le="+Inf"} 2
ksa_extsigner_request_duration_seconds_sum{code="OK",method="Sign"} 0.0025
ksa_extsigner_request_duration_seconds_count{code="OK",method="Sign"} 2
ksa_extsigner_request_duration_seconds_bucket{code="Unavailable",method="Probe",le="0.001"} 1
ksa_extsigner_request_duration_seconds_bucket{code="Unavailable",method="Probe",le="+Inf"} 1
ksa_extsigner_request_duration_seconds_sum{code="Unavailable",method="Probe"} 0
ksa_extsigner_request_duration_seconds_count{code="Unavailable",method="Probe"} 1
ksa_extsigner_request_duration_seconds_bucket{code="Unavailable",method="Sign",le="0.001"} 1
ksa_extsigner_request_duration_seconds_bucket{code="Unavailable",method="Sign",le="+Inf"} 1
ksa_extsigner_request_duration_seconds_sum{code="Unavailable",method="Sign"} 0.0005
ksa_extsigner_request_duration_seconds_count{code="Unavailable",method="Sign"} 1
# HELP ksa_extsigner_ring_reload_errors_total Ring files read again and refused: the last good ring stays.
# TYPE ksa_extsigner_ring_reload_errors_total counter
ksa_extsigner_ring_reload_errors_total 1
# HELP ksa_extsigner_ring_reload_failing 1 while the ring file's last reload was refused and the signer serves the last good ring, else 0.
# TYPE ksa_extsigner_ring_reload_failing gauge
ksa_extsigner_ring_reload_failing 1
# HELP ksa_extsigner_ring_reloads_total Ring files read again and applied.
# TYPE ksa_extsigner_ring_reloads_total counter
ksa_extsigner_ring_reloads_total 1
# HELP ksa_extsigner_ring_transitions_total Changes of the ring's keys or roles: cause schedule (a time its ring file wrote came) or rotation (a rotation step).
# TYPE ksa_extsigner_ring_transitions_total counter
ksa_extsigner_ring_transitions_total{cause="schedule"} 1
# HELP ksa_extsigner_sign_requests_total Sign requests by gRPC status code and the key that signed (or failed; empty for claims refused).
# TYPE ksa_extsigner_sign_requests_total counter
ksa_extsigner_sign_requests_total{code="InvalidArgument",kid=""} 1
ksa_extsigner_sign_requests_total{code="OK",kid="k1"} 2
ksa_extsigner_sign_requests_total{code="Unavailable",kid="k1"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))

	m.ObserveReload(nil)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_ring_reload_failing 1 while the ring file's last reload was refused and the signer serves the last good ring, else 0.
# TYPE ksa_extsigner_ring_reload_failing gauge
ksa_extsigner_ring_reload_failing 0
`), "ksa_extsigner_ring_reload_failing"), "a good reload clears it")

	// The last check of the ring file: absent before the first.
	m.ObserveRingCheck(stamp.Add(90 * time.Second))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`# HELP ksa_extsigner_ring_last_check_timestamp_seconds When the ring file was last read and checked to the end (Unix time), whether it changed, was applied or refused; absent before the first check. A check that hangs (a hung network file system) leaves it behind.
# TYPE ksa_extsigner_ring_last_check_timestamp_seconds gauge
ksa_extsigner_ring_last_check_timestamp_seconds 1.80389169e+09
`), "ksa_extsigner_ring_last_check_timestamp_seconds"))
}

func TestNewSignerMetricsConfig(t *testing.T) {
	_, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	reg := prometheus.NewRegistry()
	_, err = ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg, Namespace: "acme"})
	require.NoError(t, err)
	_, err = ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg, Namespace: "acme"})
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig, "registered twice")
	m, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg})
	require.NoError(t, err, "the default namespace is another")
	m.ObserveReload(nil)
	n, err := testutil.GatherAndCount(reg, "ksa_extsigner_ring_reloads_total", "acme_extsigner_ring_reloads_total")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}
