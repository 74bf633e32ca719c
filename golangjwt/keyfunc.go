package golangjwt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Config configures [NewKeys]. Keys is required; the zero value of every
// other field is the validator's default.
type Config struct {
	// Keys is where the keys come from: a static set, a remote JWKS, an
	// oidc.Verifier's key set. Required.
	Keys jwks.KeySource
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
// asymmetric and fit the key, a header with critical extensions ("crit")
// is refused, RSA keys are within jwks' size bounds, and at most
// MaxKeysPerToken keys are looked at per token: the rules of
// tokens.KeySelector, which it applies. It is safe for concurrent use.
type Keys struct {
	src      jwks.KeySource
	selector *tokens.KeySelector
}

// NewKeys checks the config and returns the key function's source.
func NewKeys(cfg Config) (*Keys, error) {
	if cfg.Keys == nil {
		return nil, &ksa.ConfigError{Field: prefix + ".Config.Keys", Reason: "is required"}
	}
	selector, err := tokens.NewKeySelector(tokens.KeySelectorConfig{AllowedAlgorithms: cfg.AllowedAlgorithms, MaxKeysPerToken: cfg.MaxKeysPerToken})
	if err != nil {
		// The same fields, named as this package's.
		var ce *ksa.ConfigError
		if errors.As(err, &ce) {
			return nil, &ksa.ConfigError{Field: prefix + ".Config." + strings.TrimPrefix(ce.Field, "tokens.KeySelectorConfig."), Reason: ce.Reason, Err: ce.Err}
		}
		return nil, err
	}
	return &Keys{src: cfg.Keys, selector: selector}, nil
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
	fail := func(problem, err error) (any, error) { return nil, refuse(kid, alg, problem, err) }
	switch {
	case t.Method == nil || t.Method.Alg() != alg:
		return fail(tokens.ErrAlgorithmNotAllowed, nil)
	case hasKid && !isString:
		return fail(tokens.ErrMalformed, nil)
	}
	if _, crit := t.Header["crit"]; crit {
		// No extension is understood, so a token that marks one critical
		// is refused (RFC 7515, section 4.1.11), as ksa's validator does.
		return fail(tokens.ErrMalformed, errCritical)
	}
	keys, err := k.selector.Select(ctx, k.src, kid, alg)
	switch {
	case err != nil:
		return nil, errs.Wrap(prefix, nil, fmt.Sprintf("no key for the token (kid %q, alg %q)", kid, alg), err)
	case len(keys) == 1:
		return keys[0].Public, nil
	}
	set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
	for i, key := range keys {
		set.Keys[i] = key.Public
	}
	return set, nil
}

// ParserOptions are the options a parser of service-account tokens
// needs besides the issuer and audience (jwt.WithIssuer,
// jwt.WithAudience): asymmetric algorithms only, exp required, and
// Kubernetes' leeway (tokens.DefaultLeeway) on times.
func ParserOptions() []jwt.ParserOption {
	return []jwt.ParserOption{
		jwt.WithValidMethods(jws.Names()),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(tokens.DefaultLeeway),
	}
}
