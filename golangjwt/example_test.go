package golangjwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Verify a service-account token with golang-jwt, as echo, gin or chi
// middleware does, with ksa's keys. In a real program the key source is a
// jwks.Remote of the issuer's JWKS (or an oidc.Verifier's KeySet).
func Example() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: key})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		Audiences:      []string{"vault"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-0", UID: "p-1"},
	})
	pub, _ := jwks.NewKey(key.Public())
	src, _ := jwks.NewStaticSource(pub)

	keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: src})
	if err != nil {
		log.Fatal(err)
	}
	var claims golangjwt.Claims
	opts := append(golangjwt.ParserOptions(), jwt.WithIssuer("https://issuer.example"), jwt.WithAudience("vault"), jwt.WithTimeFunc(time.Now))
	if _, err := jwt.ParseWithClaims(tok.Raw, &claims, keys.Keyfunc, opts...); err != nil {
		log.Fatal(err)
	}
	id := claims.Identity()
	fmt.Println(id.ServiceAccount, id.Pod.Name)
	// Output:
	// system:serviceaccount:prod:billing billing-0
}
