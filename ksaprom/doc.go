// Package ksaprom exports what ksa's validators and key sets report to
// Prometheus (client_golang, the Kubernetes ecosystem's metrics library).
// The core packages only call hooks with plain values
// (tokens.ValidationEvent, jwks.FetchEvent); this package, a leaf of its
// own, is the only one that imports Prometheus.
//
// # Wiring
//
//	reg := prometheus.NewRegistry()
//	metrics, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: reg})
//	verifier, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
//		Issuers:    []string{issuer},
//		Audiences:  []string{"vault"},
//		OnValidate: metrics.Observe,
//		OnFetch:    metrics.ObserveFetch,
//	})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
// Kubernetes' names, with kube-apiserver's meaning (unlabelled counters):
//
//   - serviceaccount_legacy_tokens_total: tokens without an audience whose
//     signature verified;
//   - serviceaccount_stale_tokens_total: accepted tokens used past their
//     warnafter time (kube-api-access tokens a client did not refresh);
//   - serviceaccount_valid_tokens_total: accepted tokens carrying warnafter,
//     used before it (not all valid tokens).
//
// ksa's own (prefix Config.Namespace, default "ksa"):
//
//   - ksa_token_validations_total{result,reason,cached}: result is valid or
//     refused, reason a short name per refusal sentinel ([ReasonName]:
//     "expired", "bad_signature", ...), cached whether the result cache
//     answered;
//   - ksa_token_validation_duration_seconds{result}: a latency histogram
//     ([DefaultBuckets]);
//   - ksa_jwks_fetches_total{url,reason,result}: key set fetches;
//   - ksa_jwks_last_success_timestamp_seconds{url}, ksa_jwks_age_seconds{url}
//     and ksa_jwks_keys{url}: each key set's freshness, computed when
//     scraped.
//
// Labels never carry what a token says (key IDs, issuers of refused
// tokens, subjects): an attacker could otherwise create series at will.
// Key set URLs are configuration; at most Config.MaxKeySets of them get
// series of their own, further ones count under url="other".
package ksaprom
