package golangjwt

import (
	"context"
	"crypto"
	"crypto/rsa"
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Algorithms are the algorithms the parser options admit: the asymmetric
// ones golang-jwt implements. Never none, never HMAC.
var algorithms = []string{
	jwks.RS256, jwks.RS384, jwks.RS512, jwks.PS256, jwks.PS384, jwks.PS512,
	jwks.ES256, jwks.ES384, jwks.ES512, jwks.EdDSA,
}

// Config configures [NewKeys]. Its zero value is ready to use.
type Config struct {
	// AllowedAlgorithms are algorithms accepted besides each key's own
	// (RS256 for an RSA key, the curve's for ECDSA, EdDSA), as
	// tokens.ValidatorConfig.AllowedAlgorithms: PS256 for an RSA key, say.
	// Each must be asymmetric.
	AllowedAlgorithms []string
	// MaxKeysPerToken bounds the keys one token is checked against; zero
	// means tokens.DefaultMaxKeysPerToken.
	MaxKeysPerToken int
}

// Keys finds the verification keys of tokens for golang-jwt, in any
// jwks.KeySource (a static set, a remote JWKS, an OIDC verifier's key
// set), with the rules of ksa's validator: the token's kid selects the
// keys (no fallback to others when none has it), the header's alg must be
// asymmetric and fit the key, RSA keys are within jwks' size bounds, and at
// most MaxKeysPerToken keys are offered per token. It is safe for
// concurrent use.
type Keys struct {
	src       jwks.KeySource
	extraAlgs []string
	maxKeys   int
}

// NewKeys checks the config and returns the key function's source.
func NewKeys(src jwks.KeySource, cfg Config) (*Keys, error) {
	if src == nil {
		return nil, &ConfigError{Field: "src", Reason: "is nil"}
	}
	for _, alg := range cfg.AllowedAlgorithms {
		if !slices.Contains(algorithms, alg) {
			return nil, &ConfigError{Field: "Config.AllowedAlgorithms", Reason: fmt.Sprintf("names %q, which cannot be allowed", alg)}
		}
	}
	k := &Keys{src: src, extraAlgs: slices.Clone(cfg.AllowedAlgorithms), maxKeys: cfg.MaxKeysPerToken}
	switch {
	case k.maxKeys < 0:
		return nil, &ConfigError{Field: "Config.MaxKeysPerToken", Reason: "is negative"}
	case k.maxKeys == 0:
		k.maxKeys = tokens.DefaultMaxKeysPerToken
	}
	return k, nil
}

// Keyfunc is a jwt.Keyfunc; a remote key set is asked with
// context.Background (use KeyfuncContext to pass a request's context).
func (k *Keys) Keyfunc(t *jwt.Token) (any, error) { return k.keys(context.Background(), t) }

// KeyfuncContext returns a jwt.Keyfunc that asks the key source with ctx.
func (k *Keys) KeyfuncContext(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) { return k.keys(ctx, t) }
}

func (k *Keys) keys(ctx context.Context, t *jwt.Token) (any, error) {
	alg, _ := t.Header["alg"].(string)
	kidValue, hasKid := t.Header["kid"]
	kid, isString := kidValue.(string)
	fail := func(problem, err error) (any, error) {
		return nil, &KeyError{KeyID: kid, Algorithm: alg, Problem: problem, Err: err}
	}
	switch {
	case t.Method == nil || t.Method.Alg() != alg || !slices.Contains(algorithms, alg):
		return fail(tokens.ErrAlgorithmNotAllowed, nil)
	case hasKid && !isString:
		return fail(tokens.ErrMalformed, nil)
	}
	found, err := k.src.Keys(ctx, kid)
	if err != nil {
		return fail(tokens.ErrKeySource, err)
	}
	var offered []jwt.VerificationKey
	var pubs []crypto.PublicKey
	refusedAlg := false
	for _, key := range found {
		if kid != "" && key.KeyID != kid {
			continue // a source that ignores the kid must not widen the search
		}
		if !k.fits(alg, key) {
			refusedAlg = true
			continue
		}
		if seen(pubs, key.Public) {
			continue
		}
		if len(offered) == k.maxKeys {
			break
		}
		pubs = append(pubs, key.Public)
		offered = append(offered, key.Public)
	}
	switch {
	case len(offered) == 1:
		return offered[0], nil
	case len(offered) > 1:
		return jwt.VerificationKeySet{Keys: offered}, nil
	case refusedAlg:
		return fail(tokens.ErrAlgorithmNotAllowed, nil)
	case kid != "":
		return fail(tokens.ErrUnknownKeyID, nil)
	}
	return fail(jwks.ErrNoKeys, nil)
}

// fits reports whether the key may verify alg: its own algorithm, or an
// allowed one that fits its type; RSA keys within jwks' bounds.
func (k *Keys) fits(alg string, key jwks.Key) bool {
	if _, ok := key.Public.(*rsa.PublicKey); ok && jwks.CheckPublicKey(key.Public) != nil {
		return false
	}
	return alg == key.Algorithm || (slices.Contains(k.extraAlgs, alg) && jwks.Fits(alg, key.Public))
}

// seen reports whether pub is among pubs.
func seen(pubs []crypto.PublicKey, pub crypto.PublicKey) bool {
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return false
	}
	for _, p := range pubs {
		if eq.Equal(p) {
			return true
		}
	}
	return false
}

// ParserOptions are the options a parser of service-account tokens
// needs besides the issuer and audience (jwt.WithIssuer,
// jwt.WithAudience): asymmetric algorithms only, exp required, and
// Kubernetes' leeway (tokens.DefaultLeeway) on times.
func ParserOptions() []jwt.ParserOption {
	return []jwt.ParserOption{
		jwt.WithValidMethods(slices.Clone(algorithms)),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(tokens.DefaultLeeway),
	}
}
