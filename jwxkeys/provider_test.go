package jwxkeys_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
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

// TestKeyProviderRefusesAsTheValidator: where the provider and ksa's
// validator chose keys by rules written twice, they differed: keys of
// another algorithm did not count against MaxKeysPerToken (a key past the
// bound verified a token the validator refuses), an RSA key over jwks'
// bounds was an algorithm refusal, and an unknown kid the rate-limited key
// set could not look for was a key source failure. With one
// tokens.KeySelector the provider refuses each token as the validator
// does, with the same sentinel.
func TestKeyProviderRefusesAsTheValidator(t *testing.T) {
	f := newFixture(t)
	ecPub := f.keys[0]
	ecPub.KeyID = "shared"
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: f.ec, KeyID: "shared", Now: func() time.Time { return now }})
	require.NoError(t, err)
	token, err := minter.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u"}, Audiences: []string{"vault"}})
	require.NoError(t, err)
	hdr := jws.NewHeaders()
	require.NoError(t, hdr.Set(jws.KeyIDKey, "big"))
	rsaToken, err := jws.Sign([]byte(`{"iss":"https://issuer.example","aud":["vault"]}`), jws.WithKey(jwa.RS256(), f.rsa, jws.WithProtectedHeaders(hdr)))
	require.NoError(t, err)

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
			token: string(rsaToken), want: jwks.ErrUnsupportedKey},
		{name: "an unknown kid the rate-limited key set cannot look for yet",
			err:   &jwks.RateLimitError{URL: "https://issuer.example/jwks", KeyID: "shared", Next: now.Add(time.Second)},
			token: token.Raw, want: tokens.ErrUnknownKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := sourceFunc(func(context.Context, string) ([]jwks.Key, error) { return tt.keys, tt.err })
			validator, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{"https://issuer.example"}, Keys: src,
				Audiences: []string{"vault"}, SkipObjectCheck: true, Now: func() time.Time { return now }})
			require.NoError(t, err)
			_, ksaErr := validator.Validate(t.Context(), tt.token)
			require.ErrorIs(t, ksaErr, tt.want, "ksa's validator")

			p, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: src})
			require.NoError(t, err)
			_, err = jws.Verify([]byte(tt.token), jws.WithKeyProvider(p))
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, tokens.Reason(ksaErr), "the validator's reason")
		})
	}
}

// TestKeyProvider: jws.Verify with ksa's key source through the provider
// accepts the genuine token and refuses forgeries with the sentinel ksa's
// validator gives them.
func TestKeyProvider(t *testing.T) {
	f := newFixture(t)
	src, err := jwks.NewStaticSource(f.keys...)
	require.NoError(t, err)
	p, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: src})
	require.NoError(t, err)
	_, err = jws.Verify([]byte(f.token), jws.WithKeyProvider(p))
	require.NoError(t, err)

	payload := []byte(`{"iss":"https://issuer.example","aud":["vault"]}`)
	forge := func(alg jwa.SignatureAlgorithm, key any, kid string) string {
		hdr := jws.NewHeaders()
		if kid != "" {
			require.NoError(t, hdr.Set(jws.KeyIDKey, kid))
		}
		out, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
		require.NoError(t, err)
		return string(out)
	}
	tests := []struct {
		name  string
		token string
		err   error
	}{
		{name: "unknown kid", token: forge(jwa.ES256(), f.attacker, "nope"), err: tokens.ErrUnknownKeyID},
		{name: "another key under the real kid", token: forge(jwa.ES256(), f.attacker, f.keys[0].KeyID), err: jws.VerifyError()},
		{name: "RS256 on the EC key's kid", token: forge(jwa.RS256(), f.rsa, f.keys[0].KeyID), err: tokens.ErrAlgorithmNotAllowed},
		{name: "HS256 keyed with anything", token: forge(jwa.HS256(), []byte("0123456789abcdef0123456789abcdef"), f.keys[0].KeyID), err: tokens.ErrAlgorithmNotAllowed},
		{name: "tampered payload", token: tamper(f.token), err: jws.VerifyError()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jws.Verify([]byte(tt.token), jws.WithKeyProvider(p))
			require.ErrorIs(t, err, tt.err)
		})
	}
}

func tamper(token string) string {
	parts := strings.Split(token, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	return strings.Join(parts, ".")
}

func TestNewKeyProviderRefuses(t *testing.T) {
	src, err := jwks.NewStaticSource()
	require.NoError(t, err)
	for _, cfg := range []jwxkeys.Config{{AllowedAlgorithms: []string{"HS256"}}, {MaxKeysPerToken: -1}} {
		cfg.Keys = src
		_, err := jwxkeys.NewKeyProvider(cfg)
		require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
	_, err = jwxkeys.NewKeyProvider(jwxkeys.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
