package tokenreview_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
)

const issuer = "https://issuer.example.com"

var (
	now = time.Unix(1700000000, 0)
	sa  = ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "sa-uid"}
)

// fixture mints a pod-bound token and builds a local validator that
// trusts its key.
type fixture struct {
	token string
	local *tokens.Validator
	// user is what kube-apiserver answers for the token.
	user ksa.UserInfo
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := minter.Mint(t.Context(), tokens.Request{
		ServiceAccount: sa, Audiences: []string{"vault", "other"},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-7d4", UID: "pod-uid"},
	})
	require.NoError(t, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)
	local, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{issuer}, Keys: keys, Audiences: []string{"vault"},
		SkipObjectCheck: true, Now: func() time.Time { return now },
	})
	require.NoError(t, err)
	res, err := local.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	return fixture{token: tok.Raw, local: local, user: res.UserInfo()}
}

// apiserver answers reviews as kube-apiserver would for a live token, after
// edit; it counts the reviews.
type apiserver struct {
	user  ksa.UserInfo
	calls int
	last  tokenreview.Request
	edit  func(*tokenreview.Status)
	err   error
}

func (a *apiserver) Review(_ context.Context, req tokenreview.Request) (*tokenreview.Status, error) {
	a.calls++
	a.last = req
	if a.err != nil {
		return nil, a.err
	}
	st := &tokenreview.Status{Authenticated: true, User: a.user, Audiences: []string{"vault"}}
	if a.edit != nil {
		a.edit(st)
	}
	return st, nil
}
