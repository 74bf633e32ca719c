package credprovider_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// A pass-through plugin: the kubelet's request carries the pod's token for
// the registry's audience; the plugin checks it offline and hands it to
// the registry as the password, cached no longer than the token lives.
func ExampleRun() {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }

	// The cluster's issuer, standing in for the kubelet's TokenRequest.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key, Now: clock})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "team", Name: "puller", UID: "sa-uid"},
		Audiences:      []string{"registry.example"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "web-1", UID: "pod-uid"},
	})

	// The plugin's verifier: the issuer's public keys, read from a file
	// in a real plugin.
	pub, _ := jwks.NewKey(key.Public())
	keys, _ := jwks.NewStaticSource(pub)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{"https://issuer.example"}, Keys: keys,
		Audiences: []string{"registry.example"}, SkipObjectCheck: true, Now: clock,
	})
	if err != nil {
		log.Fatal(err)
	}
	plugin := credprovider.ProviderFunc(func(ctx context.Context, req *credprovider.Request) (*credprovider.Response, error) {
		res, err := credprovider.CheckToken(ctx, req, credprovider.TokenCheck{
			Verify: validator.ValidateFor, Audience: "registry.example",
		})
		if err != nil {
			return nil, err
		}
		fmt.Println("pull by", res.Identity.ServiceAccount.Username(), "for pod", res.Identity.Pod.Name)
		return credprovider.PassThrough(req, "k8s", credprovider.Cache{For: 24 * time.Hour}, clock)
	})

	stdin := strings.NewReader(`{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest",` +
		`"image":"registry.example/team/app:v1","serviceAccountToken":"` + tok.Raw + `"}`)
	var stdout strings.Builder
	if err := credprovider.Run(context.Background(), stdin, &stdout, plugin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(strings.Replace(stdout.String(), tok.Raw, "<the pod's token>", 1))
	// Output:
	// pull by system:serviceaccount:team:puller for pod web-1
	// {"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Image","cacheDuration":"1h0m0s","auth":{"registry.example":{"username":"k8s","password":"<the pod's token>"}}}
}
