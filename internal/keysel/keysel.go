// Package keysel chooses the keys a token's signature is checked with, by
// the rules of ksa's validator, for the adapters that hand keys to other
// JOSE libraries (golangjwt, jwxkeys): the kid selects the keys (no
// fallback to others), the alg must be asymmetric and fit the key, RSA
// keys must be within jwks' bounds, a key listed twice is offered once,
// and at most a bounded number of keys is offered per token.
package keysel

import (
	"context"
	"crypto"
	"crypto/rsa"
	"fmt"
	"slices"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Algorithms are the asymmetric algorithms the adapters offer keys for:
// those both golang-jwt and jwx implement.
var Algorithms = []string{
	jwks.RS256, jwks.RS384, jwks.RS512, jwks.PS256, jwks.PS384, jwks.PS512,
	jwks.ES256, jwks.ES384, jwks.ES512, jwks.EdDSA,
}

// Policy is a checked selection policy.
type Policy struct {
	extraAlgs []string
	maxKeys   int
}

// NewPolicy checks extra (algorithms allowed besides each key's own) and
// maxKeys (zero means tokens.DefaultMaxKeysPerToken). The error is the
// field at fault and why: the adapters wrap it in their ConfigError.
func NewPolicy(extra []string, maxKeys int) (Policy, string, string) {
	for _, alg := range extra {
		if !slices.Contains(Algorithms, alg) {
			return Policy{}, "Config.AllowedAlgorithms", fmt.Sprintf("names %q, which cannot be allowed", alg)
		}
	}
	switch {
	case maxKeys < 0:
		return Policy{}, "Config.MaxKeysPerToken", "is negative"
	case maxKeys == 0:
		maxKeys = tokens.DefaultMaxKeysPerToken
	}
	return Policy{extraAlgs: slices.Clone(extra), maxKeys: maxKeys}, "", ""
}

// Select returns the public keys of src that may check a signature by alg
// under kid. When there is none, problem is the sentinel ksa's validator
// refuses such a token with (tokens.ErrAlgorithmNotAllowed,
// tokens.ErrUnknownKeyID, tokens.ErrKeySource with the source's error as
// cause, jwks.ErrNoKeys).
func (p Policy) Select(ctx context.Context, src jwks.KeySource, kid, alg string) (keys []crypto.PublicKey, problem, cause error) {
	if !slices.Contains(Algorithms, alg) {
		return nil, tokens.ErrAlgorithmNotAllowed, nil
	}
	found, err := src.Keys(ctx, kid)
	if err != nil {
		return nil, tokens.ErrKeySource, err
	}
	refusedAlg := false
	for _, key := range found {
		if kid != "" && key.KeyID != kid {
			continue // a source that ignores the kid must not widen the search
		}
		if !p.fits(alg, key) {
			refusedAlg = true
			continue
		}
		if seen(keys, key.Public) {
			continue
		}
		if len(keys) == p.maxKeys {
			break
		}
		keys = append(keys, key.Public)
	}
	switch {
	case len(keys) > 0:
		return keys, nil, nil
	case refusedAlg:
		return nil, tokens.ErrAlgorithmNotAllowed, nil
	case kid != "":
		return nil, tokens.ErrUnknownKeyID, nil
	}
	return nil, jwks.ErrNoKeys, nil
}

// fits reports whether key may check alg: its own algorithm, or an allowed
// one of its type; RSA keys only within jwks' bounds.
func (p Policy) fits(alg string, key jwks.Key) bool {
	if _, ok := key.Public.(*rsa.PublicKey); ok && jwks.CheckPublicKey(key.Public) != nil {
		return false
	}
	return alg == key.Algorithm || (slices.Contains(p.extraAlgs, alg) && jwks.Fits(alg, key.Public))
}

func seen(pubs []crypto.PublicKey, pub crypto.PublicKey) bool {
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return false
	}
	for _, q := range pubs {
		if eq.Equal(q) {
			return true
		}
	}
	return false
}
