package credprovider_test

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
	"github.com/ksa-go/ksa/tokens"
)

const (
	testIssuer   = "https://issuer.example"
	testAudience = "registry.example"
)

var t0 = time.Unix(1_800_000_000, 0)

// issuer mints pod-bound tokens and validates them offline.
type issuer struct {
	key       *ecdsa.PrivateKey
	minter    *tokens.Minter
	validator *tokens.Validator
}

func newIssuer(t testing.TB, now time.Time) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	i := &issuer{key: key, minter: minter}
	i.validator = i.validatorAt(t, now.Add(time.Minute))
	return i
}

// validatorAt returns a validator of the issuer's tokens for testAudience
// whose clock reads now.
func (i *issuer) validatorAt(t testing.TB, now time.Time) *tokens.Validator {
	t.Helper()
	pub, err := jwks.NewKey(i.key.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{testIssuer}, Keys: keys, Audiences: []string{testAudience},
		SkipObjectCheck: true, Now: func() time.Time { return now },
	})
	require.NoError(t, err)
	return validator
}

// mint returns a token of the service account for aud, bound to a pod
// unless pod is empty, valid for ttl.
func (i *issuer) mint(t testing.TB, sa, pod, aud string, ttl time.Duration) string {
	t.Helper()
	req := tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "team", Name: sa, UID: sa + "-uid"},
		Audiences:         []string{aud},
		ExpirationSeconds: int64(ttl / time.Second),
	}
	if pod != "" {
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: pod, UID: pod + "-uid"}
	}
	tok, err := i.minter.Mint(context.Background(), req)
	require.NoError(t, err)
	return tok.Raw
}
