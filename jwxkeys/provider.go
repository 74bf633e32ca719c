package jwxkeys

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Config configures [NewKeyProvider]. Keys is required; the zero value of
// every other field is the validator's default.
type Config struct {
	// Keys is where the keys come from: a static set, a remote JWKS, an
	// oidc.Verifier's key set. Required.
	Keys jwks.KeySource
	// AllowedAlgorithms are algorithms accepted besides each key's own, as
	// tokens.ValidatorConfig.AllowedAlgorithms. Each must be asymmetric.
	AllowedAlgorithms []string
	// MaxKeysPerToken bounds the keys offered for one signature; zero means
	// tokens.DefaultMaxKeysPerToken.
	MaxKeysPerToken int
}

// KeyProvider is a jws.KeyProvider over any jwks.KeySource, with the rules
// of ksa's validator (tokens.KeySelector, which it applies): the
// signature's kid selects the keys (no fallback), its alg must be
// asymmetric and fit the key, RSA keys are within jwks' bounds, at most
// MaxKeysPerToken keys are looked at per signature. Pass it with
// jws.WithKeyProvider. It is safe for concurrent use.
type KeyProvider struct {
	src      jwks.KeySource
	selector *tokens.KeySelector
}

// NewKeyProvider checks the config and returns the provider.
func NewKeyProvider(cfg Config) (*KeyProvider, error) {
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
	return &KeyProvider{src: cfg.Keys, selector: selector}, nil
}

// FetchKeys implements jws.KeyProvider.
func (p *KeyProvider) FetchKeys(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
	hdr := sig.ProtectedHeaders()
	var alg, kid string
	if a, ok := hdr.Algorithm(); ok {
		alg = a.String()
	}
	if k, ok := hdr.KeyID(); ok {
		kid = k
	}
	sigAlg, known := jwa.LookupSignatureAlgorithm(alg)
	if !known {
		return refuse(kid, alg, tokens.ErrAlgorithmNotAllowed, nil)
	}
	keys, err := p.selector.Select(ctx, p.src, kid, alg)
	if err != nil {
		return errs.Wrap(prefix, nil, fmt.Sprintf("no key for the signature (kid %q, alg %q)", kid, alg), err)
	}
	for _, k := range keys {
		sink.Key(sigAlg, k.Public)
	}
	return nil
}
