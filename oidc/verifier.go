package oidc

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// VerifierConfig configures a [Verifier]: which issuers and audiences it
// accepts, how it reaches the issuers, and how strictly it validates. Only
// Issuers and Audiences are required; every other zero value applies a
// documented default.
type VerifierConfig struct {
	// Issuers are the accepted issuers, each discovered at construction.
	// Required, none empty, no duplicates.
	Issuers []string
	// Audiences are the audiences a token must name one of (for Verify).
	// Required, none empty.
	Audiences []string

	// Client sends discovery and key set requests; nil means a new
	// http.Client (Timeout bounds each request). In a pod, pass a client
	// trusting the cluster CA.
	Client *http.Client
	// BearerToken, when set, supplies credentials for discovery (and for
	// the key set when jwks_uri has the issuer's scheme and host: credentials
	// never go to a host the discovery document names). Kubernetes serves
	// both to authenticated callers only by default; a pod passes a
	// function reading its projected token, so rotation is followed.
	BearerToken func(ctx context.Context) (string, error)
	// KeySetBearerToken, when set, supplies credentials for the key set
	// wherever it lives: kube-apiserver's jwks_uri names its advertise
	// address, another host than its issuer.
	KeySetBearerToken func(ctx context.Context) (string, error)
	// Timeout bounds each discovery and key set request; zero means
	// DefaultDiscoveryTimeout and jwks.DefaultFetchTimeout.
	Timeout time.Duration
	// KeySetLimits bounds each key set document (size, key count); zero
	// values apply jwks' defaults.
	KeySetLimits jwks.ParseOptions
	// RefetchInterval, RefetchBurst, MinCacheAge, MaxCacheAge and MaxStale
	// tune each issuer's jwks.Remote key set; zero values apply its
	// defaults (see jwks.RemoteConfig).
	RefetchInterval time.Duration
	RefetchBurst    int
	MinCacheAge     time.Duration
	MaxCacheAge     time.Duration
	MaxStale        time.Duration
	// OnFetch, when set, is called after every key set fetch (see
	// jwks.RemoteConfig.OnFetch).
	OnFetch func(jwks.FetchEvent)

	// Leeway, AllowedAlgorithms, AcceptMissingAudience, MaxTokenBytes,
	// MaxKeysPerToken and Cache are tokens.ValidatorConfig's, with its
	// defaults.
	Leeway                time.Duration
	AllowedAlgorithms     []string
	AcceptMissingAudience bool
	MaxTokenBytes         int
	MaxKeysPerToken       int
	Cache                 *tokens.CacheConfig
	// Objects, when set, checks that the service account and the bound
	// pod, secret or node still exist, as kube-apiserver does. Without it
	// (the usual case outside the cluster) a token stays valid until it
	// expires, even after its pod is deleted.
	Objects tokens.ObjectGetter
	// OnValidate, when set, is called after every verification (see
	// tokens.ValidationEvent): the hook metrics adapters plug into.
	OnValidate func(tokens.ValidationEvent)
	// Now is the clock of validation and key set freshness; nil means
	// time.Now.
	Now func() time.Time

	// InsecureAllowHTTP accepts http:// issuers, jwks_uri and redirects.
	// Never set it outside tests: over http anyone on the path can replace
	// the keys, and bearer credentials travel in clear text.
	InsecureAllowHTTP bool
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
		return nil, configError("VerifierConfig.Issuers", "is required", nil)
	}
	if err := cfg.checkAudiences(); err != nil {
		return nil, err
	}
	v := &Verifier{providers: map[string]*ProviderMetadata{}, keySets: map[string]*jwks.Remote{}}
	issuerKeys := make(map[string]jwks.KeySource, len(cfg.Issuers))
	for _, iss := range cfg.Issuers {
		if _, dup := v.providers[iss]; dup {
			return nil, configError("VerifierConfig.Issuers", fmt.Sprintf("names %q twice", iss), nil)
		}
		md, err := Discover(ctx, DiscoveryConfig{
			Issuer: iss, Client: cfg.Client, BearerToken: cfg.BearerToken,
			Timeout: cfg.Timeout, InsecureAllowHTTP: cfg.InsecureAllowHTTP,
		})
		if err != nil {
			return nil, err
		}
		bearer := cfg.KeySetBearerToken
		if bearer == nil && sameOrigin(iss, md.JWKSURI) {
			bearer = cfg.BearerToken
		}
		remote, err := cfg.remote(md.JWKSURI, bearer)
		if err != nil {
			return nil, err
		}
		v.providers[iss] = md
		v.keySets[iss] = remote
		issuerKeys[iss] = remote
	}
	if err := v.build(cfg, issuerKeys); err != nil {
		return nil, err
	}
	return v, nil
}

// checkAudiences requires audiences, none empty.
func (cfg *VerifierConfig) checkAudiences() error {
	if len(cfg.Audiences) == 0 {
		return configError("VerifierConfig.Audiences", "is required: a relying party accepts tokens meant for it only", nil)
	}
	if slices.Contains(cfg.Audiences, "") {
		return configError("VerifierConfig.Audiences", "holds an empty string, which no token can name", nil)
	}
	return nil
}

// remote builds the key set at url with the config's settings.
func (cfg *VerifierConfig) remote(url string, bearer func(context.Context) (string, error)) (*jwks.Remote, error) {
	return jwks.NewRemote(jwks.RemoteConfig{
		URL: url, Client: cfg.Client, BearerToken: bearer, Timeout: cfg.Timeout,
		Parse: cfg.KeySetLimits, RefetchInterval: cfg.RefetchInterval, RefetchBurst: cfg.RefetchBurst,
		MinCacheAge: cfg.MinCacheAge, MaxCacheAge: cfg.MaxCacheAge, MaxStale: cfg.MaxStale,
		InsecureAllowHTTP: cfg.InsecureAllowHTTP, Now: cfg.Now, OnFetch: cfg.OnFetch,
	})
}

// build makes the verifier's validator over the issuers' key sets.
func (v *Verifier) build(cfg VerifierConfig, issuerKeys map[string]jwks.KeySource) error {
	issuers := slices.Sorted(maps.Keys(issuerKeys))
	if len(cfg.Issuers) > 0 {
		issuers = cfg.Issuers
	}
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers:               issuers,
		IssuerKeys:            issuerKeys,
		Audiences:             cfg.Audiences,
		AcceptMissingAudience: cfg.AcceptMissingAudience,
		Objects:               cfg.Objects,
		SkipObjectCheck:       cfg.Objects == nil,
		Leeway:                cfg.Leeway,
		AllowedAlgorithms:     cfg.AllowedAlgorithms,
		MaxTokenBytes:         cfg.MaxTokenBytes,
		MaxKeysPerToken:       cfg.MaxKeysPerToken,
		Now:                   cfg.Now,
		Cache:                 cfg.Cache,
		OnValidate:            cfg.OnValidate,
	})
	if err != nil {
		return err
	}
	v.validator = validator
	return nil
}

// Verify validates a token for the configured audiences. token is the
// compact JWT alone, without an Authorization scheme: a token starting with
// "Bearer " is refused with a hint saying so.
func (v *Verifier) Verify(ctx context.Context, token string) (*tokens.Result, error) {
	return v.validator.Validate(ctx, token)
}

// VerifyFor validates a token for the given audiences instead of the
// configured ones, as a TokenReview with spec.audiences does; the result's
// Audiences are the intersection, in the order given. A nil or empty list
// falls back to the configured audiences (it is Verify).
func (v *Verifier) VerifyFor(ctx context.Context, token string, audiences []string) (*tokens.Result, error) {
	return v.validator.ValidateFor(ctx, token, audiences)
}

// Provider returns the discovered metadata of an issuer, or nil.
func (v *Verifier) Provider(issuer string) *ProviderMetadata { return v.providers[issuer] }

// KeySet returns an issuer's remote key set (for Stats or Refresh), or nil.
func (v *Verifier) KeySet(issuer string) *jwks.Remote { return v.keySets[issuer] }
