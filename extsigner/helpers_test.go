package extsigner_test

import (
	"crypto"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

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

// verifies checks a signature as a Sign answer gives it (strict
// base64url) over header.claims with pub.
func verifies(alg string, pub crypto.PublicKey, header, claims, signature string) error {
	sig, err := jws.Decode(signature, nil)
	if err != nil {
		return err
	}
	return jws.Verify(alg, pub, header+"."+claims, sig)
}
