package capiflow

import (
	"context"
	"crypto"
	"crypto/rand"
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/tokens"
)

// TokenServiceAccount returns the workload cluster's service account the
// flow's tokens are for: default/default, without a UID (each token gets
// a new one).
func TokenServiceAccount() ksa.ServiceAccount {
	return ksa.ServiceAccount{Namespace: "default", Name: "default"}
}

// Verify mints a token with signer as the cluster's kube-apiserver would
// (issuer, TokenServiceAccount with a new UID, audience publish.EntraAudience, an hour)
// and verifies it as a relying party does: discovering the issuer over
// https and fetching its published key set with Config.HTTPClient. The
// result names the key that verified it, signer's.
func (f *Flow) Verify(ctx context.Context, signer crypto.Signer) (*tokens.Result, error) {
	kid, err := jwks.KeyID(signer.Public())
	if err != nil {
		return nil, fmt.Errorf("the token's key: %w", err)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: f.cfg.Issuer, Signer: signer, Now: f.cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("minting with kid %s: %w", kid, err)
	}
	sa := TokenServiceAccount()
	sa.UID = newUID()
	tok, err := minter.Mint(ctx, tokens.Request{ServiceAccount: sa, Audiences: []string{publish.EntraAudience}, ExpirationSeconds: 3600})
	if err != nil {
		return nil, fmt.Errorf("minting with kid %s: %w", kid, err)
	}
	verifier, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		Issuers:   []string{f.cfg.Issuer},
		Audiences: []string{publish.EntraAudience},
		Client:    f.cfg.HTTPClient,
		Now:       f.cfg.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", f.cfg.Issuer, err)
	}
	res, err := verifier.Verify(ctx, tok.Raw)
	if err != nil {
		return nil, fmt.Errorf("verifying a token of kid %s through %s: %w", kid, f.cfg.Issuer, err)
	}
	if res.KeyID != kid {
		return nil, fmt.Errorf("a token of kid %s verified with kid %s", kid, res.KeyID)
	}
	return res, nil
}

// newUID returns a random version 4 UUID, a service account's UID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
