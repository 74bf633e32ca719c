package admissionauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Put the verifier in front of a validating webhook registered as a
// Service: the caller's token must be for the webhook's URL, bound to its
// ValidatingWebhookConfiguration, and issued to the caller's service
// account. The token here is minted locally; in a cluster, the caller
// obtains it with a TokenRequest bound to the configuration.
func ExampleVerifier_Handler() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := func() time.Time { return time.Unix(1514764800, 0) }
	const issuer = "https://kubernetes.default.svc.cluster.local"
	url := admissionauth.ServiceAudience("ksa-system", "gmsa-webhook", 443, "/validate")

	public, _ := jwks.NewKey(key.Public())
	keys, _ := jwks.NewStaticSource(public)
	tokenValidator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{issuer}, Keys: keys, Audiences: []string{url},
		SkipObjectCheck: true, // or Objects: a getter of the live configuration
		Now:             now,
	})
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := admissionauth.New(admissionauth.Config{
		Tokens:          tokenValidator.ValidateFor,
		Audience:        url,
		Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa-webhook"}},
		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "kube-system", Name: "webhook-auth"}},
		Mode:            admissionauth.Require,
	})
	if err != nil {
		log.Fatal(err)
	}
	webhook := verifier.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := admissionauth.FromContext(r.Context())
		fmt.Fprintf(w, "review %s from %s", res.Review.UID, res.Token.Identity.ServiceAccount.Username())
	}))

	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: now})
	tok, err := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"},
		Audiences:      []string{url},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa-webhook", UID: "config-uid"},
		Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {tokens.AllAPIGroups}},
	})
	if err != nil {
		log.Fatal(err)
	}
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"r-1","resource":{"group":"","version":"v1","resource":"pods"}}}`
	for _, auth := range []string{"Bearer " + tok.Raw, ""} {
		req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		webhook.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 review r-1 from system:serviceaccount:kube-system:webhook-auth
	// 401 admissionauth: no Authorization header: the caller sent no token
}

// Refusals match a sentinel of the package, and a refused token the tokens
// sentinel of its cause.
func ExampleVerifier_Verify() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const issuer = "https://kubernetes.default.svc.cluster.local"
	const url = "https://webhook.example.com/validate"
	minted := time.Unix(1514764800, 0)
	public, _ := jwks.NewKey(key.Public())
	keys, _ := jwks.NewStaticSource(public)
	// Fifteen minutes after minting: the ten-minute token has expired.
	tokenValidator, _ := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: keys,
		Audiences: []string{url}, SkipObjectCheck: true, Now: func() time.Time { return minted.Add(15 * time.Minute) }})
	verifier, _ := admissionauth.New(admissionauth.Config{
		Tokens: tokenValidator.ValidateFor, Audience: url,
		Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundMutatingWebhookConfiguration, Name: "example"}},
		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "kube-system", Name: "webhook-auth"}},
	})
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: func() time.Time { return minted }})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"},
		Audiences:      []string{url},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundMutatingWebhookConfiguration, Name: "example", UID: "config-uid"},
		Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"apps"}},
	})
	_, err := verifier.Verify(context.Background(), "Bearer "+tok.Raw, admissionauth.Review{APIVersion: admissionauth.AdmissionV1, UID: "r-2", Group: "apps"})
	fmt.Println(errors.Is(err, admissionauth.ErrToken), errors.Is(err, tokens.ErrExpired), admissionauth.StatusCode(err))
	// Output:
	// true true 401
}
