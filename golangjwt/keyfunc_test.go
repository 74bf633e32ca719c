package golangjwt_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
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

// TestRemoteKeySet: a token with Kubernetes' exact bytes, verified by
// golang-jwt with ksa's remote key set of the issuer, proves the identity
// ksa's validator reports.
func TestRemoteKeySet(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{Now: clock})
	remote, err := jwks.NewRemote(jwks.RemoteConfig{URL: oidc.JWKSURL(srv.Issuer()), Client: srv.Client(), Now: clock})
	require.NoError(t, err)
	keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: remote})
	require.NoError(t, err)
	token, err := srv.Mint(t.Context(), req)
	require.NoError(t, err)

	claims, err := parse(keys, srv.Issuer(), token)
	require.NoError(t, err)

	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{srv.Issuer()}, Keys: remote,
		Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clock})
	require.NoError(t, err)
	res, err := v.Validate(t.Context(), token)
	require.NoError(t, err)
	assert.Equal(t, res.Identity, claims.Identity())
	assert.Equal(t, "system:serviceaccount:prod:billing", claims.Subject)
}

// TestForgeries: each forged token is refused by golang-jwt with the key
// function and by ksa's validator, for the same reason.
func TestForgeries(t *testing.T) {
	const issuer = "https://issuer.example"
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	attacker, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecPub, err := jwks.NewKey(ecKey.Public())
	require.NoError(t, err)
	rsaPub, err := jwks.NewKey(rsaKey.Public())
	require.NoError(t, err)
	src, err := jwks.NewStaticSource(ecPub, rsaPub)
	require.NoError(t, err)
	keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: src})
	require.NoError(t, err)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src,
		Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clock})
	require.NoError(t, err)

	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: ecKey, Now: clock})
	require.NoError(t, err)
	genuine, err := minter.Mint(t.Context(), req)
	require.NoError(t, err)
	// The genuine claims, as golang-jwt sees them, to sign forgeries with.
	var claims golangjwt.Claims
	_, err = parse(keys, issuer, genuine.Raw)
	require.NoError(t, err, "the genuine token passes")
	_, _, err = jwt.NewParser().ParseUnverified(genuine.Raw, &claims)
	require.NoError(t, err)
	pkix, err := x509.MarshalPKIXPublicKey(ecKey.Public())
	require.NoError(t, err)

	tests := []struct {
		name  string
		token string
		// ksa is the sentinel ksa's validator refuses with, and the key
		// function when it is the one that refuses; jwtErr is golang-jwt's
		// sentinel with ParserOptions.
		ksa, jwtErr error
	}{
		{name: "unknown kid", token: sign(t, jwt.SigningMethodES256, attacker, map[string]any{"kid": "nope"}, &claims),
			ksa: tokens.ErrUnknownKeyID, jwtErr: jwt.ErrTokenUnverifiable},
		{name: "another key under the real kid", token: sign(t, jwt.SigningMethodES256, attacker, map[string]any{"kid": ecPub.KeyID}, &claims),
			ksa: tokens.ErrBadSignature, jwtErr: jwt.ErrTokenSignatureInvalid},
		{name: "tampered payload", token: tamper(t, genuine.Raw),
			ksa: tokens.ErrBadSignature, jwtErr: jwt.ErrTokenSignatureInvalid},
		{name: "alg none", token: sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": ecPub.KeyID}, &claims),
			ksa: tokens.ErrAlgorithmNotAllowed, jwtErr: jwt.ErrTokenSignatureInvalid},
		{name: "HS256 keyed with the public key", token: sign(t, jwt.SigningMethodHS256, pkix, map[string]any{"kid": ecPub.KeyID}, &claims),
			ksa: tokens.ErrAlgorithmNotAllowed, jwtErr: jwt.ErrTokenSignatureInvalid},
		{name: "RS256 header on the EC key's kid", token: sign(t, jwt.SigningMethodRS256, rsaKey, map[string]any{"kid": ecPub.KeyID}, &claims),
			ksa: tokens.ErrAlgorithmNotAllowed, jwtErr: jwt.ErrTokenUnverifiable},
		{name: "kid not a string", token: sign(t, jwt.SigningMethodES256, ecKey, map[string]any{"kid": 7}, &claims),
			ksa: tokens.ErrMalformed, jwtErr: jwt.ErrTokenUnverifiable},
		// Signed with the genuine key: an extension the verifier does not
		// understand must be refused (RFC 7515, section 4.1.11).
		{name: "crit naming a header member", token: sign(t, jwt.SigningMethodES256, ecKey, map[string]any{"kid": ecPub.KeyID, "crit": []string{"exp"}, "exp": 1}, &claims),
			ksa: tokens.ErrMalformed, jwtErr: jwt.ErrTokenUnverifiable},
		{name: "crit with b64 false", token: sign(t, jwt.SigningMethodES256, ecKey, map[string]any{"kid": ecPub.KeyID, "crit": []string{"b64"}, "b64": false}, &claims),
			ksa: tokens.ErrMalformed, jwtErr: jwt.ErrTokenUnverifiable},
		{name: "crit empty", token: sign(t, jwt.SigningMethodES256, ecKey, map[string]any{"kid": ecPub.KeyID, "crit": []string{}}, &claims),
			ksa: tokens.ErrMalformed, jwtErr: jwt.ErrTokenUnverifiable},
		{name: "crit null", token: sign(t, jwt.SigningMethodES256, ecKey, map[string]any{"kid": ecPub.KeyID, "crit": nil}, &claims),
			ksa: tokens.ErrMalformed, jwtErr: jwt.ErrTokenUnverifiable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ksaErr := validator.Validate(t.Context(), tt.token)
			require.ErrorIs(t, ksaErr, tt.ksa, "ksa's validator")

			// With the parser options: golang-jwt's own error, and the key
			// function's reason where it refused.
			_, err := parse(keys, issuer, tt.token)
			require.ErrorIs(t, err, tt.jwtErr, "golang-jwt with the parser options")
			if errors.Is(err, jwt.ErrTokenUnverifiable) {
				require.ErrorIs(t, err, tt.ksa, "the key function's reason")
			}
			// Without them, the key function alone guards the algorithm.
			var c golangjwt.Claims
			_, err = jwt.ParseWithClaims(tt.token, &c, keys.Keyfunc, jwt.WithTimeFunc(clock))
			if errors.Is(err, jwt.ErrTokenUnverifiable) {
				require.ErrorIs(t, err, tt.ksa, "the key function's reason")
			} else {
				require.ErrorIs(t, err, jwt.ErrTokenSignatureInvalid)
				require.Equal(t, tokens.ErrBadSignature, tt.ksa, "only a bad signature gets past the key function")
			}
		})
	}
}

// TestKeyLimit: a token without kid is checked against at most
// MaxKeysPerToken keys, as ksa's validator does.
func TestKeyLimit(t *testing.T) {
	var all []jwks.Key
	var signers []crypto.Signer
	for range 4 {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		pub, err := jwks.NewKey(k.Public())
		require.NoError(t, err)
		all = append(all, pub)
		signers = append(signers, k)
	}
	src, err := jwks.NewStaticSource(all...)
	require.NoError(t, err)
	keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: src, MaxKeysPerToken: 3})
	require.NoError(t, err)
	claims := jwt.RegisteredClaims{ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	within := sign(t, jwt.SigningMethodES256, signers[2], nil, claims)
	beyond := sign(t, jwt.SigningMethodES256, signers[3], nil, claims)
	_, err = jwt.ParseWithClaims(within, &jwt.RegisteredClaims{}, keys.Keyfunc, jwt.WithTimeFunc(clock))
	require.NoError(t, err)
	_, err = jwt.ParseWithClaims(beyond, &jwt.RegisteredClaims{}, keys.Keyfunc, jwt.WithTimeFunc(clock))
	require.ErrorIs(t, err, jwt.ErrTokenSignatureInvalid, "the fourth key is not tried")
}

func TestNewKeysRefuses(t *testing.T) {
	src, err := jwks.NewStaticSource()
	require.NoError(t, err)
	for _, cfg := range []golangjwt.Config{{AllowedAlgorithms: []string{"HS256"}}, {AllowedAlgorithms: []string{"none"}}, {MaxKeysPerToken: -1}} {
		cfg.Keys = src
		_, err := golangjwt.NewKeys(cfg)
		require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
	_, err = golangjwt.NewKeys(golangjwt.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
