package jwxkeys

import (
	"context"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/ksa-go/ksa/internal/keysel"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Config configures [NewKeyProvider]. Its zero value is ready to use.
type Config struct {
	// AllowedAlgorithms are algorithms accepted besides each key's own, as
	// tokens.ValidatorConfig.AllowedAlgorithms. Each must be asymmetric.
	AllowedAlgorithms []string
	// MaxKeysPerToken bounds the keys offered for one signature; zero means
	// tokens.DefaultMaxKeysPerToken.
	MaxKeysPerToken int
}

// KeyProvider is a jws.KeyProvider over any jwks.KeySource, with the rules
// of ksa's validator: the signature's kid selects the keys (no fallback),
// its alg must be asymmetric and fit the key, RSA keys are within jwks'
// bounds, at most MaxKeysPerToken keys per signature. Pass it with
// jws.WithKeyProvider. It is safe for concurrent use.
type KeyProvider struct {
	src    jwks.KeySource
	policy keysel.Policy
}

// NewKeyProvider checks the config and returns the provider.
func NewKeyProvider(src jwks.KeySource, cfg Config) (*KeyProvider, error) {
	if src == nil {
		return nil, &ConfigError{Field: "src", Reason: "is nil"}
	}
	policy, field, reason := keysel.NewPolicy(cfg.AllowedAlgorithms, cfg.MaxKeysPerToken)
	if field != "" {
		return nil, &ConfigError{Field: field, Reason: reason}
	}
	return &KeyProvider{src: src, policy: policy}, nil
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
		return &KeyError{KeyID: kid, Algorithm: alg, Problem: tokens.ErrAlgorithmNotAllowed}
	}
	keys, problem, cause := p.policy.Select(ctx, p.src, kid, alg)
	if problem != nil {
		return &KeyError{KeyID: kid, Algorithm: alg, Problem: problem, Err: cause}
	}
	for _, k := range keys {
		sink.Key(sigAlg, k)
	}
	return nil
}
