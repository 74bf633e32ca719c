package oidctest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

// A relying party tried against a Kubernetes-shaped issuer: discover it,
// verify a token it minted, and follow a key rotation. In a test, use
// oidctest.Start(t, cfg), which closes the server when the test ends.
func ExampleNew() {
	ctx := context.Background()
	srv, err := oidctest.NewServer(oidctest.Config{Path: "/cluster-1"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		Issuers:   []string{srv.Issuer()},
		Audiences: []string{"vault"},
		Client:    srv.Client(), // trusts the test server's certificate
	})
	if err != nil {
		log.Fatal(err)
	}
	req := tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "3f1c6a8e-0b7d-4d2e-9a57-2c4e1b9f0a11"},
		Audiences:      []string{"vault"},
	}
	raw, err := srv.Mint(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.Verify(ctx, raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.UserInfo().Username, res.Algorithm)

	// Rotate the signing key and drop the old one: the verifier meets an
	// unknown kid and fetches the key set again.
	key, err := srv.Rotate(nil, false)
	if err != nil {
		log.Fatal(err)
	}
	raw, err = srv.Mint(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	res, err = v.Verify(ctx, raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verified with the new key:", res.KeyID == key.KeyID)

	discovery, keySet := srv.Requests()
	fmt.Println("discovery requests:", discovery, "key set requests:", keySet)
	// Output:
	// system:serviceaccount:prod:billing ES256
	// verified with the new key: true
	// discovery requests: 1 key set requests: 2
}
