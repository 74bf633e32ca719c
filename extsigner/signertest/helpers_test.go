package signertest

import (
	"crypto"
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

// The helpers of the checks' tests: keys, a ring's answers.

// keys by name, generated once per test binary.
func key(name string) crypto.Signer { return testkeys.Generated(name) }

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func mustKey(t testing.TB, pub crypto.PublicKey) jwks.Key {
	t.Helper()
	k, err := jwks.NewKey(pub)
	require.NoError(t, err)
	return k
}

func excluded(t testing.TB, pub crypto.PublicKey) jwks.Key {
	k := mustKey(t, pub)
	k.ExcludeFromDiscovery = true
	return k
}

// clock is a fixed clock for a ring.
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
		Issuer:    DefaultIssuer,
		Subject:   "system:serviceaccount:billing:api",
		Audience:  []string{Audience},
		IssuedAt:  now,
		NotBefore: now,
		Expiry:    now.Add(lifetime),
		Kubernetes: &tokens.KubernetesClaims{
			Namespace:      "billing",
			ServiceAccount: ksa.ObjectRef{Name: "api", UID: "0d5a2f0e-7c1b-4d8e-9a3f-6b2c1d0e9f87"},
		},
	}
}

// encodeClaims is the claims part of a token.
func encodeClaims(c *tokens.Claims) string {
	return base64.RawURLEncoding.EncodeToString(c.AppendJSON(nil))
}
