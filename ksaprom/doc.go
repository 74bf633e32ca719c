// Package ksaprom exports what ksa's validators, key sets and signers report to
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
//
// # Pod-certificate signers
//
// [NewPodCertMetrics] exports what a controller deciding
// PodCertificateRequests with a podcert.Signer reports ("ksa podcert serve"
// is one): it calls ObserveDecision after writing each decision's status,
// and the Observe...Error methods when a write or a signature fails.
//
//   - ksa_podcert_requests_total{outcome,reason} (counter): requests
//     decided; outcome is issued, denied or failed, reason the condition's
//     (Issued, UnsupportedKeyType, InvalidUnverifiedUserAnnotations,
//     InvalidRequest, CAUnavailable; any other counts as "other"), every
//     one present from the start at 0;
//   - ksa_podcert_decision_duration_seconds{outcome} (histogram,
//     [DefaultPodCertBuckets]): deciding, signing and writing the status;
//   - ksa_podcert_oldest_undecided_request_seconds (gauge): the age of the
//     oldest request seen and not yet decided, by PodCertConfig.Now, 0 when
//     there is none; computed when scraped from
//     PodCertConfig.OldestUndecided, and not exported without it;
//   - ksa_podcert_ca_key_errors_total (counter): signatures the CA key
//     failed to make (certificates, probes): a key store down;
//   - ksa_podcert_status_update_conflicts_total (counter): status writes
//     refused because the request had changed (replicas side by side,
//     a stale cache);
//   - ksa_podcert_status_update_errors_total (counter): statuses not
//     written for another reason;
//   - ksa_podcert_trust_bundle_updates_total (counter): the signer's
//     ClusterTrustBundle created or updated.
//
// # The external signer
//
// [SignerMetrics] exports what ksa's external JWT signer reports
// (extsigner, and its gRPC server), named in the style of
// kube-apiserver's apiserver_externaljwt_* metrics so that both sides of
// the socket read alike:
//
//   - ksa_extsigner_sign_requests_total{code,kid}: Sign requests by gRPC
//     status code and the key that signed or failed;
//   - ksa_extsigner_request_duration_seconds{method,code}: a histogram of
//     answers (Sign, FetchKeys, Metadata, and Probe, the signer's own check
//     of its key store);
//   - ksa_extsigner_key_store_errors_total{kid}: signatures the key store
//     failed, or answered with a signature the published key rejects;
//   - ksa_extsigner_ring_transitions_total{cause}: changes of the ring's
//     keys or roles, cause "schedule" (a time its ring file wrote) or
//     "rotation";
//   - ksa_extsigner_ring_reloads_total, ksa_extsigner_ring_reload_errors_total
//     and ksa_extsigner_ring_reload_failing (1 while the signer serves the
//     last good ring because the file's last reload was refused);
//   - ksa_extsigner_ring_last_check_timestamp_seconds: when the ring file
//     was last read and checked to the end (absent before the first check):
//     a check that hangs leaves it behind;
//   - ksa_extsigner_refused_connections_total: connections closed at once
//     because the peer's user ID is not allowed (ListenConfig.OnRefused);
//   - ksa_extsigner_data_timestamp_seconds and ksa_extsigner_keys{role}:
//     the ring's data timestamp and its keys by role, read when scraped
//     (SignerConfig.Ring).
//
// Wiring, in a program that serves a ring:
//
//	reg := prometheus.NewRegistry()
//	m, err := ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg, Ring: ring})
//	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring, OnRequest: func(ev grpcserver.Event) {
//		m.ObserveRequest(ksaprom.SignerRequest{Method: ev.Method, Code: ev.Code.String(), KeyID: ev.KeyID, Err: ev.Err, Duration: ev.Duration})
//	}})
//
// and m.ObserveChange as the ring's RingConfig.OnChange. Key IDs are the
// ring's own (at most extsigner.MaxKeys at a time), never a requester's.
package ksaprom
