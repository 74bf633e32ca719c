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
