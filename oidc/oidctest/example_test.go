package oidctest_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

// exampleTB stands in for the *testing.T a real test passes to Start: an
// Example gets none. Only the methods oidctest calls are implemented.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (t *exampleTB) Helper()                           {}
func (t *exampleTB) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleTB) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }

// finish runs the cleanups, as the testing package does when a test ends.
func (t *exampleTB) finish() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A relying party tested against a Kubernetes-shaped issuer: discover it,
// verify a token it minted, and follow a key rotation. In a test, pass the
// test's t instead of exampleTB.
func ExampleStart() {
	t := &exampleTB{}
	defer t.finish()
	ctx := context.Background()

	srv := oidctest.Start(t, oidctest.Options{Path: "/cluster-1"})
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		Issuers:    []string{srv.Issuer()},
		Discovery:  oidc.DiscoveryConfig{Client: srv.Client()},
		Validation: tokens.ValidatorConfig{Audiences: []string{"vault"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	sa := ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "3f1c6a8e-0b7d-4d2e-9a57-2c4e1b9f0a11"}

	res, err := v.Verify(ctx, srv.Mint(t, tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"}}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.UserInfo().Username, res.Algorithm)

	// Rotate the signing key and drop the old one: the verifier meets an
	// unknown kid and fetches the key set again.
	key := srv.Rotate(t, nil, false)
	res, err = v.Verify(ctx, srv.Mint(t, tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"}}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified with the new key:", res.KeyID == key.KeyID)

	discovery, jwks := srv.Requests()
	fmt.Println("discovery requests:", discovery, "key set requests:", jwks)
	// Output:
	// system:serviceaccount:prod:billing ES256
	// verified with the new key: true
	// discovery requests: 1 key set requests: 2
}
