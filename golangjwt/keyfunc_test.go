package golangjwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// sourceFunc is a jwks.KeySource answering as the function does.
type sourceFunc func(ctx context.Context, kid string) ([]jwks.Key, error)

func (f sourceFunc) Keys(ctx context.Context, kid string) ([]jwks.Key, error) { return f(ctx, kid) }

// fakeRSAKey is an RSA public key of the given size under kid: a random
// odd modulus, which no signature is ever checked with here.
func fakeRSAKey(t *testing.T, bits int, kid string) jwks.Key {
	t.Helper()
	buf := make([]byte, (bits+7)/8)
	_, err := rand.Read(buf)
	require.NoError(t, err)
	buf[0] |= 0x80
	buf[len(buf)-1] |= 1
	return jwks.Key{KeyID: kid, Public: &rsa.PublicKey{N: new(big.Int).SetBytes(buf), E: 65537}, Algorithm: jwks.RS256}
}

// TestKeyfuncRefusesAsTheValidator: where the key function and ksa's
// validator chose keys by rules written twice, they differed: keys of
// another algorithm did not count against MaxKeysPerToken (a key past the
// bound verified a token the validator refuses), an RSA key over jwks'
// bounds was an algorithm refusal, and an unknown kid the rate-limited key
// set could not look for was a key source failure. With one
// tokens.KeySelector the key function refuses each token as the validator
// does, with the same sentinel.
func TestKeyfuncRefusesAsTheValidator(t *testing.T) {
	const issuer = "https://issuer.example"
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecPub, err := jwks.NewKeyWithID(ecKey.Public(), "shared")
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: ecKey, KeyID: "shared", Now: clock})
	require.NoError(t, err)
	token, err := minter.Mint(t.Context(), req)
	require.NoError(t, err)
	rsaToken := sign(t, jwt.SigningMethodRS256, mustRSA(t), map[string]any{"kid": "big"}, jwt.RegisteredClaims{
		Issuer: issuer, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))})

	tests := []struct {
		name  string
		keys  []jwks.Key
		err   error
		token string
		want  error
	}{
		{name: "the signing key past the bound, after keys of another algorithm",
			keys:  []jwks.Key{fakeRSAKey(t, 2048, "shared"), fakeRSAKey(t, 2048, "shared"), fakeRSAKey(t, 2048, "shared"), ecPub},
			token: token.Raw, want: tokens.ErrTooManyKeys},
		{name: "an RSA key over the size bound", keys: []jwks.Key{fakeRSAKey(t, jwks.MaxRSABits+8, "big")},
			token: rsaToken, want: jwks.ErrUnsupportedKey},
		{name: "an unknown kid the rate-limited key set cannot look for yet",
			err:   &jwks.RateLimitError{URL: "https://issuer.example/jwks", KeyID: "shared", Next: now.Add(time.Second)},
			token: token.Raw, want: tokens.ErrUnknownKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := sourceFunc(func(context.Context, string) ([]jwks.Key, error) { return tt.keys, tt.err })
			validator, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src,
				Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clock})
			require.NoError(t, err)
			_, ksaErr := validator.Validate(t.Context(), tt.token)
			require.ErrorIs(t, ksaErr, tt.want, "ksa's validator")

			keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: src})
			require.NoError(t, err)
			_, err = jwt.ParseWithClaims(tt.token, &jwt.RegisteredClaims{}, keys.Keyfunc, jwt.WithTimeFunc(clock))
			require.ErrorIs(t, err, jwt.ErrTokenUnverifiable, "the key function refuses")
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, tokens.Reason(ksaErr), "the validator's reason")
		})
	}
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}
