package tokens

import (
	"context"
	"crypto"
	"crypto/rsa"
	"fmt"
	"slices"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
)

// KeySelectorConfig configures a [KeySelector]. Its zero value is the
// validator's default: each key checks only its own algorithm, and at most
// DefaultMaxKeysPerToken keys are looked at per token.
type KeySelectorConfig struct {
	// AllowedAlgorithms lists algorithms accepted beyond each key's own,
	// as ValidatorConfig.AllowedAlgorithms: each must be asymmetric, and
	// is only ever used with a key it fits.
	AllowedAlgorithms []string
	// MaxKeysPerToken bounds the keys looked at for one token, as
	// ValidatorConfig.MaxKeysPerToken; zero means DefaultMaxKeysPerToken.
	MaxKeysPerToken int
}

// KeySelector chooses the keys a token's signature is checked against, by
// the rules of the [Validator] (which uses one):
//
//   - the header's alg must be asymmetric: never none or HMAC;
//   - a kid selects the keys with exactly that ID, with no fallback to the
//     others when none has it (a key source that answers with other keys
//     does not widen the search); no kid selects every key;
//   - a key listed twice (the same public key and algorithm) counts once;
//   - at most MaxKeysPerToken keys are looked at, those refused below
//     included, so that a forged token costs bounded work whatever the key
//     set holds;
//   - a key is refused when alg is neither its own algorithm nor an allowed
//     one it fits, or when it is an RSA key outside jwks' bounds
//     (jwks.CheckPublicKey), whatever source it came from.
//
// It is the one home of these rules: the adapters that hand ksa's keys to
// other JOSE libraries (golangjwt, jwxkeys) use it too. A KeySelector is
// safe for concurrent use.
type KeySelector struct {
	extraAlgs []string
	maxKeys   int
}

// NewKeySelector checks the config and returns a KeySelector.
func NewKeySelector(cfg KeySelectorConfig) (*KeySelector, error) {
	s, err := newKeySelector(cfg, "KeySelectorConfig")
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// newKeySelector checks cfg, naming its fields as those of the config
// struct named config.
func newKeySelector(cfg KeySelectorConfig, config string) (KeySelector, error) {
	for _, alg := range cfg.AllowedAlgorithms {
		if !isAsymmetric(alg) {
			return KeySelector{}, configError(config+".AllowedAlgorithms", fmt.Sprintf("names %q, which cannot be allowed", alg), nil)
		}
	}
	s := KeySelector{extraAlgs: slices.Clone(cfg.AllowedAlgorithms), maxKeys: cfg.MaxKeysPerToken}
	switch {
	case s.maxKeys < 0:
		return KeySelector{}, configError(config+".MaxKeysPerToken", "is negative", nil)
	case s.maxKeys == 0:
		s.maxKeys = DefaultMaxKeysPerToken
	}
	return s, nil
}

// Select returns the keys of src that may check a signature by alg under
// kid (empty for a token without one), in src's order. When none may, the
// error is the one the Validator refuses such a token with: it matches
// ErrAlgorithmNotAllowed, ErrKeySource (src failed), ErrUnknownKeyID,
// jwks.ErrNoKeys, ErrBadSignature (an RSA key outside jwks' bounds) or
// ErrTooManyKeys, and lists the refusal of every key looked at.
func (s *KeySelector) Select(ctx context.Context, src jwks.KeySource, kid, alg string) ([]jwks.Key, error) {
	if !isAsymmetric(alg) {
		return nil, notAsymmetric(alg)
	}
	keys, err := src.Keys(ctx, kid)
	if err != nil {
		return nil, keyError(kid, err)
	}
	var selected []jwks.Key
	var refusals []error
	looked, limit := s.walk(keys, kid, alg, func(k jwks.Key, refused error) bool {
		if refused != nil {
			refusals = append(refusals, refused)
		} else {
			selected = append(selected, k)
		}
		return false
	})
	switch {
	case len(selected) > 0:
		return selected, nil
	case looked == 0:
		return nil, keyError(kid, nil)
	}
	if limit != nil {
		refusals = append(refusals, limit)
	}
	return nil, errs.Join(prefix, fmt.Sprintf("no key may check the signature (%d looked at)", looked), refusals)
}

// walk looks at keys, a key source's answer for kid, by the rules: try is
// called with each key looked at and, when alg may not be checked with
// it, why (nil otherwise); try returns true to end the walk. walk returns
// how many keys were looked at and, when the bound left keys out, the
// error saying how many.
func (s *KeySelector) walk(keys []jwks.Key, kid, alg string, try func(k jwks.Key, refused error) (stop bool)) (looked int, limit error) {
	for i, k := range keys {
		if kid != "" && k.KeyID != kid {
			// A key source that ignores the kid must not widen the search.
			continue
		}
		if seenBefore(keys[:i], k, kid) {
			continue
		}
		if looked == s.maxKeys {
			return looked, keyLimit(len(keys)-i, s.maxKeys)
		}
		looked++
		var refused error
		if err := checkKeySize(k); err != nil {
			refused = signatureError(k.KeyID, alg, err)
		} else if !s.allows(alg, k) {
			refused = algorithmError(alg, &k, "", nil)
		}
		if try(k, refused) {
			break
		}
	}
	return looked, nil
}

// notAsymmetric refuses an alg that is not in the table: none, HMAC or
// unknown.
func notAsymmetric(alg string) error {
	return algorithmError(alg, nil, "only asymmetric signature algorithms are accepted", nil)
}

// seenBefore reports whether an earlier key of the list, eligible for the
// same kid, holds the same public key as k with the same algorithm:
// checking with it again could only give the same answer.
func seenBefore(earlier []jwks.Key, k jwks.Key, kid string) bool {
	pub, ok := k.Public.(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return false
	}
	for _, e := range earlier {
		if (kid == "" || e.KeyID == kid) && e.Algorithm == k.Algorithm && pub.Equal(e.Public) {
			return true
		}
	}
	return false
}

// checkKeySize refuses RSA keys outside jwks' bounds (modulus size,
// exponent) whatever source they came from: a huge modulus or exponent
// makes each verification cost far more. Other properties (curve
// membership) are checked where keys are built (NewKey, ParseSet); a custom
// KeySource is trusted to build keys that way.
func checkKeySize(k jwks.Key) error {
	if _, ok := k.Public.(*rsa.PublicKey); ok {
		return jwks.CheckPublicKey(k.Public)
	}
	return nil
}

// allows reports whether alg may be checked with k: its own algorithm, or
// an allowed one that fits it.
func (s *KeySelector) allows(alg string, k jwks.Key) bool {
	if alg == k.Algorithm {
		return true
	}
	return slices.Contains(s.extraAlgs, alg) && jwks.Fits(alg, k.Public)
}

// isAsymmetric reports whether alg is an algorithm of the table (never none
// or HMAC).
func isAsymmetric(alg string) bool { return jws.Known(alg) }
