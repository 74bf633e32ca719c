package registrytoken_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/registrytoken"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	testIssuer   = "https://issuer.example"
	testAudience = "registry.example"
	testService  = "registry.example"
)

var t0 = time.Unix(1_800_000_000, 0)

// cluster mints service-account tokens and verifies them offline.
type cluster struct {
	key    *ecdsa.PrivateKey
	minter *tokens.Minter
	valid  *tokens.Validator
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: key, Now: func() time.Time { return t0 }})
	require.NoError(t, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{testIssuer}, Keys: keys, Audiences: []string{testAudience},
		SkipObjectCheck: true, Now: func() time.Time { return t0.Add(time.Minute) },
	})
	require.NoError(t, err)
	return &cluster{key: key, minter: minter, valid: v}
}

// mint returns a token of ns/sa for aud, bound to a pod unless pod is
// empty, valid for ttl.
func (c *cluster) mint(t testing.TB, ns, sa, pod, aud string, ttl time.Duration) string {
	t.Helper()
	req := tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: ns, Name: sa, UID: sa + "-uid"},
		Audiences:         []string{aud},
		ExpirationSeconds: int64(ttl / time.Second),
	}
	if pod != "" {
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: pod, UID: pod + "-uid"}
	}
	tok, err := c.minter.Mint(context.Background(), req)
	require.NoError(t, err)
	return tok.Raw
}

// config is a valid Config: team/builder pushes team/*, team/app pulls
// team/app.
func (c *cluster) config(t testing.TB) registrytoken.Config {
	t.Helper()
	signer, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return registrytoken.Config{
		Issuer: "ksa-registry-token", Service: testService, Signer: signer,
		Check: credprovider.TokenCheck{Verify: c.valid.ValidateFor, Audience: testAudience},
		Rules: []registrytoken.Rule{
			{Namespace: "team", ServiceAccount: "app", Repositories: []string{"team/app"}},
			{Namespace: "team", ServiceAccount: "builder", Repositories: []string{"team/*"}, Actions: []string{"pull", "push"}},
		},
		Now: func() time.Time { return t0.Add(time.Minute) },
	}
}
