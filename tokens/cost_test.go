package tokens_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// hostileRSAKeys returns n distinct RSA public keys of the given size with
// the largest exponent jwks accepts, all carrying kid. Verifying a
// signature costs the same whether the modulus is a product of two primes
// or not, so random odd moduli stand in for real keys.
func hostileRSAKeys(t testing.TB, n, bits int, kid string) []jwks.Key {
	t.Helper()
	keys := make([]jwks.Key, n)
	for i := range keys {
		buf := make([]byte, bits/8)
		_, _ = rand.Read(buf)
		buf[0] |= 0x80
		buf[len(buf)-1] |= 1
		key, err := jwks.NewKeyWithID(&rsa.PublicKey{N: new(big.Int).SetBytes(buf), E: jwks.MaxRSAExponent}, kid)
		require.NoError(t, err)
		keys[i] = key
	}
	return keys
}

// hostileECKeys returns n distinct P-521 public keys carrying kid: the most
// expensive verification among the curves ksa accepts.
func hostileECKeys(t testing.TB, n int, kid string) []jwks.Key {
	t.Helper()
	keys := make([]jwks.Key, n)
	for i := range keys {
		priv, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
		require.NoError(t, err)
		keys[i], err = jwks.NewKeyWithID(priv.Public(), kid)
		require.NoError(t, err)
	}
	return keys
}

// forgedToken is a well-formed token of testIssuer whose signature is
// sigBytes random bytes: it passes every check that comes before the
// signature.
func forgedToken(t testing.TB, alg, kid string, sigBytes int) string {
	t.Helper()
	header := `{"alg":"` + alg + `"`
	if kid != "" {
		header += `,"kid":"` + kid + `"`
	}
	header += "}"
	real, err := mustMinter(t, testkeys.K8sEC()).Mint(context.Background(), benchRequest())
	require.NoError(t, err)
	sig := make([]byte, sigBytes)
	_, _ = rand.Read(sig)
	// Below every modulus of this size, so RSA does the whole
	// verification rather than refusing the value at once.
	sig[0] &= 0x7f
	if strings.HasPrefix(alg, "ES") {
		// r and s below the curve order, so ECDSA does the whole
		// verification too.
		sig[0], sig[sigBytes/2] = 0, 0
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + strings.Split(real.Raw, ".")[1] + "." + enc.EncodeToString(sig)
}

// TestForgedTokenWorkIsBounded: however many keys share a token's kid (or,
// without a kid, however many keys a set holds), at most MaxKeysPerToken
// distinct keys are tried, and the refusal says how many were left.
func TestForgedTokenWorkIsBounded(t *testing.T) {
	const kid = "shared"
	rsaKeys := hostileRSAKeys(t, 20, 2048, kid)
	for _, tc := range []struct {
		name      string
		keys      []jwks.Key
		token     string
		limit     int
		wantTried int
		wantLeft  int
	}{
		{name: "one kid, default limit", keys: rsaKeys, token: forgedToken(t, jwks.RS256, kid, 256), wantTried: tokens.DefaultMaxKeysPerToken, wantLeft: 20 - tokens.DefaultMaxKeysPerToken},
		{name: "no kid, default limit", keys: rsaKeys, token: forgedToken(t, jwks.RS256, "", 256), wantTried: tokens.DefaultMaxKeysPerToken, wantLeft: 20 - tokens.DefaultMaxKeysPerToken},
		{name: "raised limit", keys: rsaKeys, token: forgedToken(t, jwks.RS256, kid, 256), limit: 10, wantTried: 10, wantLeft: 10},
		{name: "exactly the limit", keys: rsaKeys[:3], token: forgedToken(t, jwks.RS256, kid, 256), wantTried: 3},
		{name: "duplicates count once", keys: append(append([]jwks.Key{}, rsaKeys[0], rsaKeys[0], rsaKeys[0], rsaKeys[1]), rsaKeys[1]), token: forgedToken(t, jwks.RS256, kid, 256), wantTried: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustValidator(t, mustSource(t, anyKeys(tc.keys)...), func(c *tokens.ValidatorConfig) { c.MaxKeysPerToken = tc.limit })
			_, err := v.Validate(t.Context(), tc.token)
			require.ErrorIs(t, err, tokens.ErrBadSignature)
			var sigErrs int
			var list interface{ Unwrap() []error }
			if errors.As(err, &list) {
				for _, e := range list.Unwrap() {
					if errors.Is(e, tokens.ErrBadSignature) {
						sigErrs++
					}
				}
			} else {
				sigErrs = 1
			}
			assert.Equal(t, tc.wantTried, sigErrs, "keys tried")
			if tc.wantLeft == 0 {
				assert.NotErrorIs(t, err, tokens.ErrTooManyKeys, "no key left untried")
				return
			}
			require.ErrorIs(t, err, tokens.ErrTooManyKeys)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d more keys not tried", tc.wantLeft))
		})
	}
}

// TestKeyPastTheLimitIsNotTried: a genuine signature by a key past the
// limit is refused, and the same key within the limit verifies it.
func TestKeyPastTheLimitIsNotTried(t *testing.T) {
	signer := testkeys.K8sRSA()
	raw, err := mustMinter(t, signer, func(c *tokens.MinterConfig) { c.KeyID = "shared" }).Mint(context.Background(), benchRequest())
	require.NoError(t, err)
	genuine, err := jwks.NewKeyWithID(signer.Public(), "shared")
	require.NoError(t, err)
	decoys := hostileRSAKeys(t, 3, 2048, "shared")

	v := mustValidator(t, mustSource(t, anyKeys(append(decoys, genuine))...))
	_, err = v.Validate(t.Context(), raw.Raw)
	require.ErrorIs(t, err, tokens.ErrTooManyKeys)

	v = mustValidator(t, mustSource(t, anyKeys(append(decoys[:2], genuine))...))
	res, err := v.Validate(t.Context(), raw.Raw)
	require.NoError(t, err)
	assert.Equal(t, "shared", res.KeyID)
}

func anyKeys(keys []jwks.Key) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// BenchmarkForgedTokenHostileKeySet measures the worst a forged token can
// cost with a key set within every limit: 100 keys sharing one kid (or a
// token without kid), RSA-8192 with exponent 65537 or P-521, against one
// RS256/ES256 verification with a Kubernetes-sized key.
func BenchmarkForgedTokenHostileKeySet(b *testing.B) {
	rsaKeys := hostileRSAKeys(b, jwks.DefaultMaxKeys, jwks.MaxRSABits, "shared")
	ecKeys := hostileECKeys(b, jwks.DefaultMaxKeys, "shared")
	for _, bc := range []struct {
		name  string
		keys  []jwks.Key
		token string
	}{
		{name: "RSA-8192/shared-kid", keys: rsaKeys, token: forgedToken(b, jwks.RS256, "shared", jwks.MaxRSABits/8)},
		{name: "RSA-8192/no-kid", keys: rsaKeys, token: forgedToken(b, jwks.RS256, "", jwks.MaxRSABits/8)},
		{name: "P-521/shared-kid", keys: ecKeys, token: forgedToken(b, jwks.ES512, "shared", 132)},
	} {
		v := mustValidator(b, mustSource(b, anyKeys(bc.keys)...))
		b.Run(bc.name, func(b *testing.B) {
			ctx := b.Context()
			for b.Loop() {
				if _, err := v.Validate(ctx, bc.token); !errors.Is(err, tokens.ErrBadSignature) {
					b.Fatal(err)
				}
			}
		})
	}
}
