package oidc

import (
	"context"
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// VerifierConfig configures a [Verifier].
type VerifierConfig struct {
	// Issuers are the accepted issuers, each discovered at construction.
	// Required.
	Issuers []string
	// Discovery is the template for each issuer's discovery (Client,
	// BearerToken, Timeout, InsecureAllowHTTP); Issuer is filled in.
	Discovery DiscoveryConfig
	// KeySet is the template for each issuer's remote key set (rate
	// limits, cache bounds, timeout, OnFetch); URL is filled in from the
	// discovered jwks_uri, and Client from Discovery when left nil.
	// Discovery's BearerToken is sent to the jwks_uri only when it has the
	// issuer's scheme and host: credentials never go to a host the
	// discovery document names. Where the key set lives elsewhere but needs
	// them (kube-apiserver: the issuer is a Service name, jwks_uri its
	// advertise address), set KeySet.BearerToken explicitly.
	KeySet jwks.RemoteConfig
	// Validation configures token validation as for tokens.NewValidator:
	// set Audiences (required) and optionally Leeway, AllowedAlgorithms,
	// Now, MaxTokenBytes, Cache, AcceptMissingAudience. Issuers, Keys and
	// IssuerKeys are set by the verifier and must be left empty.
	//
	// Liveness: with no Objects getter the verifier makes no liveness
	// checks (SkipObjectCheck is implied), as any relying party outside the
	// cluster must: a token stays valid until exp even after its pod is
	// deleted. Give an Objects getter to check, as kube-apiserver does.
	Validation tokens.ValidatorConfig
}

// Verifier verifies service-account tokens of one or several issuers as a
// relying party: it discovers each issuer, keeps a [jwks.Remote] key set per
// issuer, and validates with [tokens.Validator] using only the keys of the
// issuer a token names. It answers with the same [tokens.Result] as static
// validation. It is safe for concurrent use.
type Verifier struct {
	providers map[string]*ProviderMetadata
	keySets   map[string]*jwks.Remote
	validator *tokens.Validator
}

// NewVerifier discovers every issuer (failing if any discovery fails: retry
// the construction, or build one verifier per issuer, when an issuer may be
// down at start) and builds the verifier. Discovery is not repeated: a
// changed jwks_uri needs a new verifier. No key set is fetched until the
// first token.
func NewVerifier(ctx context.Context, cfg VerifierConfig) (*Verifier, error) {
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("oidc: VerifierConfig.Issuers is required")
	}
	val := cfg.Validation
	if len(val.Issuers) != 0 || val.Keys != nil || val.IssuerKeys != nil {
		return nil, errors.New("oidc: VerifierConfig.Validation must not set Issuers, Keys or IssuerKeys")
	}
	v := &Verifier{providers: map[string]*ProviderMetadata{}, keySets: map[string]*jwks.Remote{}}
	val.Issuers = cfg.Issuers
	val.IssuerKeys = make(map[string]jwks.KeySource, len(cfg.Issuers))
	for _, iss := range cfg.Issuers {
		if _, dup := v.providers[iss]; dup {
			return nil, fmt.Errorf("oidc: issuer %q is already specified", iss)
		}
		dc := cfg.Discovery
		dc.Issuer = iss
		md, err := Discover(ctx, dc)
		if err != nil {
			return nil, err
		}
		kc := cfg.KeySet
		kc.URL = md.JWKSURI
		if kc.Client == nil {
			kc.Client = cfg.Discovery.Client
		}
		if kc.BearerToken == nil && sameOrigin(iss, md.JWKSURI) {
			kc.BearerToken = cfg.Discovery.BearerToken
		}
		kc.InsecureAllowHTTP = kc.InsecureAllowHTTP || cfg.Discovery.InsecureAllowHTTP
		remote, err := jwks.NewRemote(kc)
		if err != nil {
			return nil, err
		}
		v.providers[iss] = md
		v.keySets[iss] = remote
		val.IssuerKeys[iss] = remote
	}
	if val.Objects == nil {
		val.SkipObjectCheck = true
	}
	validator, err := tokens.NewValidator(val)
	if err != nil {
		return nil, err
	}
	v.validator = validator
	return v, nil
}

// Verify validates a token for the configured audiences.
func (v *Verifier) Verify(ctx context.Context, token string) (*tokens.Result, error) {
	return v.validator.Validate(ctx, token)
}

// VerifyFor validates a token for the given audiences instead.
func (v *Verifier) VerifyFor(ctx context.Context, token string, audiences []string) (*tokens.Result, error) {
	return v.validator.ValidateFor(ctx, token, audiences)
}

// Provider returns the discovered metadata of an issuer, or nil.
func (v *Verifier) Provider(issuer string) *ProviderMetadata { return v.providers[issuer] }

// KeySet returns an issuer's remote key set (for Stats or Refresh), or nil.
func (v *Verifier) KeySet(issuer string) *jwks.Remote { return v.keySets[issuer] }
