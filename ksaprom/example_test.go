package ksaprom_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/tokens"
)

// Export a validator's metrics: plug Observe into OnValidate (and, for a
// remote key set or an oidc.Verifier, ObserveFetch into OnFetch), then
// serve the registry with promhttp.HandlerFor.
func Example() {
	reg := prometheus.NewRegistry()
	metrics, err := ksaprom.NewMetrics(ksaprom.Config{Registerer: reg})
	if err != nil {
		log.Fatal(err)
	}

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		Audiences:         []string{"vault"},
		ExpirationSeconds: 3600,
	})
	pub, _ := jwks.NewKey(key.Public())
	keys, _ := jwks.NewStaticSource(pub)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{"https://issuer.example"}, Keys: keys, Audiences: []string{"vault"},
		SkipObjectCheck: true, OnValidate: metrics.Observe, Now: time.Now,
	})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = validator.Validate(context.Background(), tok.Raw)
	_, _ = validator.Validate(context.Background(), "not a token")

	n, _ := testutil.GatherAndCount(reg, "ksa_token_validations_total")
	fmt.Println("validation series:", n)
	// Output:
	// validation series: 2
}

// Export a pod-certificate signer's metrics: a controller that writes
// the statuses of a podcert.Signer's decisions reports each, with the
// time it took, and tells the metrics when its oldest undecided request
// was created.
func ExampleNewPodCertMetrics() {
	reg := prometheus.NewRegistry()
	var oldestUndecided time.Time // the controller's, from its cache of requests
	metrics, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{
		Registerer:      reg,
		OldestUndecided: func() time.Time { return oldestUndecided },
	})
	if err != nil {
		log.Fatal(err)
	}

	// After writing the status of a decision the signer made:
	metrics.ObserveDecision(&podcert.Decision{Outcome: podcert.Issued, Reason: podcert.ReasonIssued}, 12*time.Millisecond)

	families, _ := reg.Gather()
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "ksa_podcert_requests_total" && m.GetCounter().GetValue() > 0 {
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetLabel()[1].GetValue(), m.GetCounter().GetValue())
			}
			if f.GetName() == "ksa_podcert_oldest_undecided_request_seconds" {
				fmt.Println(f.GetName(), m.GetGauge().GetValue())
			}
		}
	}
	// Output:
	// ksa_podcert_oldest_undecided_request_seconds 0
	// ksa_podcert_requests_total issued Issued 1
}
