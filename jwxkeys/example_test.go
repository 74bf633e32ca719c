package jwxkeys_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"

	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
	"github.com/ksa-go/ksa/tokens"
)

// Verify a service-account token with jwx, ksa's key source behind jwx's
// key provider interface. In a real program the source is a jwks.Remote of
// the issuer's JWKS.
func ExampleKeyProvider() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		Audiences:      []string{"vault"},
	})
	pub, _ := jwks.NewKey(key.Public())
	src, _ := jwks.NewStaticSource(pub)

	provider, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: src})
	if err != nil {
		log.Fatal(err)
	}
	payload, err := jws.Verify([]byte(tok.Raw), jws.WithKeyProvider(provider))
	if err != nil {
		log.Fatal(err)
	}
	claims, err := tokens.ParseUnverified(tok.Raw) // verified just above
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(payload) > 0, claims.Subject)
	// Output:
	// true system:serviceaccount:prod:billing
}
