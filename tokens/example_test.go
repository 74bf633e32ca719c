package tokens_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Mint a pod-bound token and print its claims, which are byte for byte what
// kube-apiserver writes for the same request, clock and jti.
func ExampleMinter_Mint() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{
		Issuer:       "https://kubernetes.default.svc.cluster.local",
		Signer:       key,
		APIAudiences: []string{"https://kubernetes.default.svc"},
		Now:          func() time.Time { return time.Unix(1514764800, 0) },
		NewJTI:       func() string { return "4f1d3b6e-0000-0000-0000-000000000000" },
	})
	if err != nil {
		log.Fatal(err)
	}
	tok, err := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"},
		Audiences:      []string{"vault"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod", UID: "pod-uid"},
		Node:           &ksa.ObjectRef{Name: "mynode", UID: "node-uid"},
	})
	if err != nil {
		log.Fatal(err)
	}
	payload, _ := tok.Claims.MarshalJSON()
	fmt.Println(string(payload))
	fmt.Println("parts:", strings.Count(tok.Raw, ".")+1)
	fmt.Println("expires:", tok.ExpirationTimestamp.UTC())
	// Output:
	// {"aud":["vault"],"exp":1514768400,"iat":1514764800,"iss":"https://kubernetes.default.svc.cluster.local","jti":"4f1d3b6e-0000-0000-0000-000000000000","kubernetes.io":{"namespace":"myns","node":{"name":"mynode","uid":"node-uid"},"pod":{"name":"mypod","uid":"pod-uid"},"serviceaccount":{"name":"mysvcacct","uid":"sa-uid"}},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}
	// parts: 3
	// expires: 2018-01-01 01:00:00 +0000 UTC
}

// Validate a token as a relying party outside the cluster would: issuer,
// key, audience and time, without liveness checks.
func ExampleValidator_Validate() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Unix(1514764800, 0)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{
		Issuer: "https://issuer.example.com", Signer: key,
		Now: func() time.Time { return now }, NewJTI: func() string { return "abc" },
	})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		Audiences:      []string{"vault"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-7d4", UID: "p-9"},
	})

	pub, err := jwks.NewKey(key.Public())
	if err != nil {
		log.Fatal(err)
	}
	keys, err := jwks.NewStaticSource(pub)
	if err != nil {
		log.Fatal(err)
	}
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers:         []string{"https://issuer.example.com"},
		Keys:            keys,
		Audiences:       []string{"vault"},
		SkipObjectCheck: true, // no API access: the token is trusted until it expires
		Now:             func() time.Time { return now.Add(time.Minute) },
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := validator.Validate(context.Background(), tok.Raw)
	if err != nil {
		log.Fatal(err)
	}
	user := res.UserInfo()
	fmt.Println(user.Username)
	fmt.Println(user.Groups)
	fmt.Println(user.Extra[ksa.ExtraPodName], user.Extra[ksa.ExtraCredentialID])
	fmt.Println(res.Audiences)
	// Output:
	// system:serviceaccount:prod:billing
	// [system:serviceaccounts system:serviceaccounts:prod]
	// [billing-7d4] [JTI=abc]
	// [vault]
}

// With an ObjectGetter the validator checks, as kube-apiserver does, that
// the service account and the pod still exist with the UIDs in the token.
func ExampleObjectGetterFunc() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Unix(1514764800, 0)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example.com", Signer: key, Now: func() time.Time { return now }})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-7d4", UID: "p-9"},
	})

	live := map[string]string{"ServiceAccount/billing": "u-1", "Pod/billing-7d4": "p-9"}
	getter := tokens.ObjectGetterFunc(func(_ context.Context, kind tokens.ObjectKind, _, name string) (tokens.LiveObject, error) {
		uid, ok := live[string(kind)+"/"+name]
		if !ok {
			return tokens.LiveObject{}, tokens.ErrObjectNotFound
		}
		return tokens.LiveObject{UID: uid}, nil
	})
	pub, _ := jwks.NewKey(key.Public())
	keys, _ := jwks.NewStaticSource(pub)
	validator, _ := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{"https://issuer.example.com"}, Keys: keys,
		Audiences: []string{"https://issuer.example.com"}, Objects: getter,
		Now: func() time.Time { return now },
	})
	_, err := validator.Validate(context.Background(), tok.Raw)
	fmt.Println("pod running:", err)

	delete(live, "Pod/billing-7d4")
	_, err = validator.Validate(context.Background(), tok.Raw)
	fmt.Println("pod deleted:", errors.Is(err, tokens.ErrInvalidated))
	fmt.Println(err)
	// Output:
	// pod running: <nil>
	// pod deleted: true
	// tokens: service account token has been invalidated: Pod "billing-7d4" not found
}
