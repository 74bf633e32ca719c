package ksaprom_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/tokens"
)

var kubernetesNames = []string{"serviceaccount_legacy_tokens_total", "serviceaccount_stale_tokens_total", "serviceaccount_valid_tokens_total"}

// counters renders Kubernetes' three counters as the exposition format.
func counters(legacy, stale, valid int) string {
	return fmt.Sprintf(`# HELP serviceaccount_legacy_tokens_total Cumulative legacy service account tokens used: tokens without an audience, counted once their signature verified, as kube-apiserver counts them.
# TYPE serviceaccount_legacy_tokens_total counter
serviceaccount_legacy_tokens_total %d
# HELP serviceaccount_stale_tokens_total Cumulative stale projected service account tokens used: valid tokens used past their warnafter time.
# TYPE serviceaccount_stale_tokens_total counter
serviceaccount_stale_tokens_total %d
# HELP serviceaccount_valid_tokens_total Cumulative valid projected service account tokens used: valid tokens carrying warnafter, used before it.
# TYPE serviceaccount_valid_tokens_total counter
serviceaccount_valid_tokens_total %d
`, legacy, stale, valid)
}

// TestKubernetesCounters holds the serviceaccount_* counters to
// kube-apiserver's meaning, event by event.
func TestKubernetesCounters(t *testing.T) {
	expired := &tokens.TimeError{Claim: "exp"}
	tests := []struct {
		name                 string
		ev                   tokens.ValidationEvent
		legacy, stale, valid int
	}{
		{name: "a valid token without warnafter counts nowhere", ev: tokens.ValidationEvent{}},
		{name: "warnafter not passed", ev: tokens.ValidationEvent{WarnAfter: true}, valid: 1},
		{name: "warnafter passed", ev: tokens.ValidationEvent{WarnAfter: true, Stale: true}, stale: 1},
		{name: "a stale token refused counts nowhere", ev: tokens.ValidationEvent{WarnAfter: true, Stale: true, Err: expired, Reason: tokens.ErrExpired}},
		{name: "no audience, valid", ev: tokens.ValidationEvent{NoAudience: true}, legacy: 1},
		{name: "no audience, expired after its signature verified", ev: tokens.ValidationEvent{NoAudience: true, Err: expired, Reason: tokens.ErrExpired}, legacy: 1},
		{name: "no audience, forged", ev: tokens.ValidationEvent{NoAudience: true, Err: tokens.ErrBadSignature, Reason: tokens.ErrBadSignature}},
		{name: "no audience, unknown key", ev: tokens.ValidationEvent{NoAudience: true, Err: tokens.ErrUnknownKeyID, Reason: tokens.ErrUnknownKeyID}},
		{name: "cached answers are not counted", ev: tokens.ValidationEvent{NoAudience: true, WarnAfter: true, Cached: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: reg})
			require.NoError(t, err)
			m.Observe(tt.ev)
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(counters(tt.legacy, tt.stale, tt.valid)), kubernetesNames...))
		})
	}
}

// TestValidatorWired scrapes the metrics of a real validator: valid and
// refused tokens by reason, cache hits, and the latency histogram.
func TestValidatorWired(t *testing.T) {
	now := time.Unix(1700000000, 0)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := minter.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u"}, Audiences: []string{"vault"}})
	require.NoError(t, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	m, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: reg, Buckets: []float64{0.001}})
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{"https://issuer.example"}, Keys: keys, Audiences: []string{"vault"}, SkipObjectCheck: true,
		Now: func() time.Time { return now }, Cache: &tokens.CacheConfig{}, OnValidate: m.Observe,
	})
	require.NoError(t, err)
	ctx := context.Background()
	for range 2 { // the second answer comes from the cache
		_, err = v.Validate(ctx, tok.Raw)
		require.NoError(t, err)
	}
	_, err = v.Validate(ctx, tok.Raw[:len(tok.Raw)-4]+"AAAA")
	require.ErrorIs(t, err, tokens.ErrBadSignature)
	_, err = v.Validate(ctx, "garbage")
	require.ErrorIs(t, err, tokens.ErrMalformed)

	want := `# HELP ksa_token_validations_total Token validations by result (valid, refused), reason of a refusal and whether the result cache answered.
# TYPE ksa_token_validations_total counter
ksa_token_validations_total{cached="false",reason="",result="valid"} 1
ksa_token_validations_total{cached="true",reason="",result="valid"} 1
ksa_token_validations_total{cached="false",reason="bad_signature",result="refused"} 1
ksa_token_validations_total{cached="false",reason="malformed",result="refused"} 1
# HELP ksa_token_validation_duration_seconds Time a token validation took, by result.
# TYPE ksa_token_validation_duration_seconds histogram
ksa_token_validation_duration_seconds_bucket{result="refused",le="0.001"} 2
ksa_token_validation_duration_seconds_bucket{result="refused",le="+Inf"} 2
ksa_token_validation_duration_seconds_sum{result="refused"} 0
ksa_token_validation_duration_seconds_count{result="refused"} 2
ksa_token_validation_duration_seconds_bucket{result="valid",le="0.001"} 2
ksa_token_validation_duration_seconds_bucket{result="valid",le="+Inf"} 2
ksa_token_validation_duration_seconds_sum{result="valid"} 0
ksa_token_validation_duration_seconds_count{result="valid"} 2
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "ksa_token_validations_total", "ksa_token_validation_duration_seconds"))
}

// TestKeySetMetrics scrapes fetch counts, the last success, the key-set
// age by the injected clock, and the bound on URLs with series of their
// own.
func TestKeySetMetrics(t *testing.T) {
	now := time.Unix(1700000000, 0)
	reg := prometheus.NewPedanticRegistry()
	m, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: reg, MaxKeySets: 1, Now: func() time.Time { return now }})
	require.NoError(t, err)
	a := "https://issuer.example/openid/v1/jwks"
	m.ObserveFetch(jwks.FetchEvent{URL: a, Reason: jwks.FetchInitial, Start: now.Add(-90 * time.Second), Duration: 0, Keys: 2})
	m.ObserveFetch(jwks.FetchEvent{URL: a, Reason: jwks.FetchUnknownKeyID, Start: now.Add(-30 * time.Second), Err: errors.New("503")})
	m.ObserveFetch(jwks.FetchEvent{URL: "https://other.example/jwks", Reason: jwks.FetchInitial, Start: now, Keys: 1})

	want := `# HELP ksa_jwks_fetches_total Key set fetches by URL, reason (initial, expired, unknown-kid, refresh) and result (ok, error).
# TYPE ksa_jwks_fetches_total counter
ksa_jwks_fetches_total{reason="initial",result="ok",url="https://issuer.example/openid/v1/jwks"} 1
ksa_jwks_fetches_total{reason="unknown-kid",result="error",url="https://issuer.example/openid/v1/jwks"} 1
ksa_jwks_fetches_total{reason="initial",result="ok",url="other"} 1
# HELP ksa_jwks_age_seconds Time since the key set was last fetched successfully.
# TYPE ksa_jwks_age_seconds gauge
ksa_jwks_age_seconds{url="https://issuer.example/openid/v1/jwks"} 90
# HELP ksa_jwks_keys Usable keys in the key set's last successful fetch.
# TYPE ksa_jwks_keys gauge
ksa_jwks_keys{url="https://issuer.example/openid/v1/jwks"} 2
# HELP ksa_jwks_last_success_timestamp_seconds When the key set was last fetched successfully (Unix time).
# TYPE ksa_jwks_last_success_timestamp_seconds gauge
ksa_jwks_last_success_timestamp_seconds{url="https://issuer.example/openid/v1/jwks"} 1.69999991e+09
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "ksa_jwks_fetches_total", "ksa_jwks_age_seconds", "ksa_jwks_keys", "ksa_jwks_last_success_timestamp_seconds"))
}

func TestNewRefuses(t *testing.T) {
	_, err := ksaprom.NewMetrics(ksaprom.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Equal(t, "ksaprom: Config.Registerer is required (prometheus.NewRegistry() or prometheus.DefaultRegisterer)", err.Error())

	reg := prometheus.NewRegistry()
	_, err = ksaprom.NewMetrics(ksaprom.Config{Registerer: reg})
	require.NoError(t, err)
	_, err = ksaprom.NewMetrics(ksaprom.Config{Registerer: reg})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig, "registered twice")
	var already prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &already)

	_, err = ksaprom.NewMetrics(ksaprom.Config{Registerer: prometheus.NewRegistry(), MaxKeySets: -1})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
