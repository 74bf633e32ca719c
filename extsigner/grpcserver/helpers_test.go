package grpcserver_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// The helpers of extsigner's own tests, for rings behind a server.

const (
	testIssuer   = "https://kubernetes.default.svc.cluster.local"
	testAudience = "vault"
)

// clock is a settable clock for a ring.
type clock = testclock.Clock

func newClock() *clock { return testclock.New(time.Unix(1_800_000_000, 0).UTC()) }

// newRing makes a ring whose primary is signer, on clk.
func newRing(t testing.TB, clk *clock, signer crypto.Signer) *extsigner.Ring {
	t.Helper()
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys: []extsigner.RingKey{{Signer: signer, Role: extsigner.RolePrimary}},
		Now:  clk.Now,
	})
	require.NoError(t, err)
	return ring
}

func primary(s crypto.Signer) extsigner.RingKey {
	return extsigner.RingKey{Signer: s, Role: extsigner.RolePrimary}
}

// testClaims returns the claims of a pod-bound token issued at now for
// lifetime, as kube-apiserver writes them.
func testClaims(now time.Time, lifetime time.Duration) *tokens.Claims {
	now = now.Truncate(time.Second)
	return &tokens.Claims{
		Issuer:    testIssuer,
		Subject:   "system:serviceaccount:billing:api",
		Audience:  []string{testAudience},
		IssuedAt:  now,
		NotBefore: now,
		Expiry:    now.Add(lifetime),
		ID:        "2b2b46e2-1f7e-4b0c-9d7e-5f3a1c9e8d21",
		Kubernetes: &tokens.KubernetesClaims{
			Namespace:      "billing",
			ServiceAccount: ksa.ObjectRef{Name: "api", UID: "0d5a2f0e-7c1b-4d8e-9a3f-6b2c1d0e9f87"},
			Pod:            &ksa.ObjectRef{Name: "api-0", UID: "9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f"},
		},
	}
}

// encodeClaims is the claims part of a token.
func encodeClaims(c *tokens.Claims) string {
	return base64.RawURLEncoding.EncodeToString(c.AppendJSON(nil))
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// validate checks a token assembled from a Sign answer with ksa's
// validator, trusting the keys the ring publishes, at now.
func validate(t testing.TB, set extsigner.KeySet, token string, now time.Time) (*tokens.Result, error) {
	t.Helper()
	src, err := jwks.NewStaticSource(set.Keys...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{testIssuer}, Keys: src, Audiences: []string{testAudience},
		SkipObjectCheck: true, Now: func() time.Time { return now },
	})
	require.NoError(t, err)
	return v.Validate(t.Context(), token)
}

// keys by name, generated once per test binary.
func key(name string) crypto.Signer { return testkeys.Generated(name) }

func excluded(t testing.TB, pub crypto.PublicKey) jwks.Key {
	t.Helper()
	k, err := jwks.NewKey(pub)
	require.NoError(t, err)
	k.ExcludeFromDiscovery = true
	return k
}

func der(t testing.TB, pub any) []byte {
	t.Helper()
	b, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return b
}

// failingSigner returns err from every call.
func failingSigner(pub crypto.PublicKey, err error) extsigner.ContextSigner {
	return extsigner.SignerFunc(pub, func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) { return nil, err })
}
