// Command quickstart walks through ksa end to end with embedded defaults and
// no cluster or cloud: it mints a Kubernetes service-account token with a
// freshly generated key, publishes the key as a JWKS, validates the token as
// a relying party would from that JWKS alone, and prints the identity the
// token proves.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	issuer   = "https://oidc.example.com/cluster-1"
	audience = "api://AzureADTokenExchange"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// 1. The cluster side: a signing key, as kube-apiserver's
	//    --service-account-signing-key-file.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key})
	if err != nil {
		return err
	}

	// 2. A pod-bound token, as the kubelet requests for a projected volume.
	tok, err := minter.Mint(ctx, tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "payments", Name: "billing", UID: "9e1f3c7a-52b4-4d5e-8f6a-1b2c3d4e5f60"},
		Audiences:         []string{audience},
		ExpirationSeconds: 3600,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-7d4f8b9c6-x2x4z", UID: "7f2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
		Node:              &ksa.ObjectRef{Name: "node-1", UID: "1a2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "minted token (%d bytes) for %s, expires %s\n", len(tok.Raw), tok.Claims.Subject, tok.ExpirationTimestamp.UTC().Format(time.RFC3339))

	// 3. Publish the public key as a JWKS: public members only, audited.
	signing, err := jwks.NewKey(key)
	if err != nil {
		return err
	}
	doc, err := jwks.MarshalSet([]jwks.Key{signing})
	if err != nil {
		return err
	}
	if err := jwks.Audit(doc); err != nil {
		return err
	}
	fmt.Fprintf(out, "published JWKS: %s\n", doc)

	// 4. The relying party: it only has the JWKS document and the issuer.
	set, err := jwks.ParseSet(doc, jwks.ParseOptions{})
	if err != nil {
		return err
	}
	keys, err := jwks.NewStaticSource(anyKeys(set.Keys)...)
	if err != nil {
		return err
	}
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers:         []string{issuer},
		Keys:            keys,
		Audiences:       []string{audience},
		SkipObjectCheck: true, // outside the cluster: no pod liveness checks
	})
	if err != nil {
		return err
	}
	res, err := validator.Validate(ctx, tok.Raw)
	if err != nil {
		return err
	}

	// 5. What the token proves.
	user := res.UserInfo()
	fmt.Fprintf(out, "verified with key %s (%s) for audiences %v\n", res.KeyID, res.Algorithm, res.Audiences)
	fmt.Fprintf(out, "username: %s\nuid:      %s\ngroups:   %s\n", user.Username, user.UID, strings.Join(user.Groups, ", "))
	extras := make([]string, 0, len(user.Extra))
	for k, v := range user.Extra {
		extras = append(extras, fmt.Sprintf("%s=%s", k, strings.Join(v, ",")))
	}
	sort.Strings(extras)
	for _, e := range extras {
		fmt.Fprintf(out, "extra:    %s\n", e)
	}

	// 6. A token for another audience is refused with a typed error.
	if _, err := validator.ValidateFor(ctx, tok.Raw, []string{"https://vault.example.com"}); err != nil {
		fmt.Fprintf(out, "other audience refused: %v\n", err)
	}
	return nil
}

func anyKeys(keys []jwks.Key) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
