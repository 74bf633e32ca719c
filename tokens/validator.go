package tokens

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	ksaerrs "github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
)

// DefaultMaxKeysPerToken is how many distinct keys a token's signature is
// checked against when ValidatorConfig.MaxKeysPerToken is zero. With RSA
// verification keys bounded to 8192-bit moduli and exponents up to 65537
// (jwks.CheckPublicKey), three keys bound the work a forged token causes to
// about three RSA-8192 or P-521 verifications, a few milliseconds on one
// core, however many keys a hostile key set shares one kid among.
const DefaultMaxKeysPerToken = 3

// DefaultLeeway is the clock skew allowed on exp, nbf and iat, and the grace
// after a bound object's deletion: one minute, as in kube-apiserver.
const DefaultLeeway = time.Minute

// NoLeeway, as ValidatorConfig.Leeway, asks for no clock skew at all.
const NoLeeway time.Duration = -1

// ValidatorConfig configures a [Validator]. The zero value of every optional
// field is the safe choice; NewValidator refuses a config that would accept
// tokens without checking issuer, keys, audiences or bound objects.
type ValidatorConfig struct {
	// Issuers are the accepted iss values (kube-apiserver's
	// --service-account-issuer, repeated). Required, none empty, no
	// duplicates.
	Issuers []string
	// Keys supplies verification keys for every issuer. Required unless
	// IssuerKeys is set.
	Keys jwks.KeySource
	// IssuerKeys binds keys to issuers: a token is verified only with the
	// keys of the issuer its iss claim names, so a key of one issuer can
	// never verify a token claiming another. Every issuer in Issuers must
	// have an entry; Keys must then be nil. A relying party fed by several
	// OIDC discovery documents uses this.
	IssuerKeys map[string]jwks.KeySource
	// Audiences are the audiences this validator accepts by default
	// (kube-apiserver's --api-audiences); a call to ValidateFor may ask for
	// others. Required unless InsecureSkipAudienceCheck is set.
	Audiences []string
	// InsecureSkipAudienceCheck, with Audiences empty, accepts tokens for
	// any audience on Validate (ValidateFor with explicit audiences still
	// checks them). It is what kube-apiserver does when no API audiences are
	// configured; a relying party MUST NOT set it.
	InsecureSkipAudienceCheck bool
	// AcceptMissingAudience treats a token without aud as if it named the
	// validator's Audiences, as kube-apiserver does. By default such tokens
	// are refused; legacy Secret-based tokens, which never carry aud, are
	// always treated this way when accepted at all.
	AcceptMissingAudience bool
	// Objects looks up the service account and bound objects, as
	// kube-apiserver always does for bound tokens. Required unless
	// SkipObjectCheck is set.
	Objects ObjectGetter
	// SkipObjectCheck validates without liveness checks, as a relying party
	// outside the cluster must: a token then stays valid until it expires
	// even after its pod is deleted.
	SkipObjectCheck bool
	// Leeway is the clock skew allowed on exp, nbf and iat and the grace
	// after an object's deletion. Zero means DefaultLeeway (one minute);
	// NoLeeway means none.
	Leeway time.Duration
	// AllowedAlgorithms lists algorithms accepted beyond each key's own. By
	// default a token must use exactly its key's algorithm (RS256 for an RSA
	// key from PEM); Kubernetes also accepts PS256..PS512 and RS384/RS512
	// on RSA keys, which this allows when listed. An algorithm is only ever
	// used with a key it fits; none and HMAC are never accepted.
	AllowedAlgorithms []string
	// Legacy accepts legacy Secret-based tokens (issuer
	// kubernetes/serviceaccount). Off by default.
	Legacy LegacyConfig
	// MaxTokenBytes refuses larger tokens before parsing; zero means
	// DefaultMaxTokenBytes.
	MaxTokenBytes int
	// MaxKeysPerToken bounds the distinct keys one token's signature is
	// checked against (keys sharing its kid, or every key for a token
	// without kid), so that a forged token costs a bounded amount of work
	// whatever the key set holds; zero means DefaultMaxKeysPerToken.
	MaxKeysPerToken int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Cache, when non-nil, remembers successful validations (see
	// [CacheConfig]).
	Cache *CacheConfig
	// OnValidate, when set, is called after every validation, valid or
	// not, with what it found (see [ValidationEvent]). It runs on the
	// caller's goroutine before Validate returns: it must be quick and safe
	// for concurrent use.
	OnValidate func(ValidationEvent)
}

// Validator validates service-account tokens as kube-apiserver does. It is
// safe for concurrent use.
type Validator struct {
	issuers       []string
	keys          jwks.KeySource
	issuerKeys    map[string]jwks.KeySource
	audiences     []string
	skipAudience  bool
	acceptNoAud   bool
	objects       ObjectGetter
	leeway        time.Duration
	selector      KeySelector
	legacy        LegacyConfig
	maxTokenBytes int
	onValidate    func(ValidationEvent)
	now           func() time.Time
	cache         *resultCache
}

// NewValidator checks the config and returns a Validator.
func NewValidator(cfg ValidatorConfig) (*Validator, error) {
	v := &Validator{
		keys:          cfg.Keys,
		skipAudience:  cfg.InsecureSkipAudienceCheck,
		acceptNoAud:   cfg.AcceptMissingAudience,
		objects:       cfg.Objects,
		legacy:        cfg.Legacy,
		maxTokenBytes: cfg.MaxTokenBytes,
		onValidate:    cfg.OnValidate,
		now:           cfg.Now,
	}
	if err := checkIssuers(cfg.Issuers); err != nil {
		return nil, err
	}
	v.issuers = slices.Clone(cfg.Issuers)
	config := func(field, reason string) (*Validator, error) {
		return nil, configError("ValidatorConfig."+field, reason, nil)
	}
	switch {
	case cfg.Keys == nil && cfg.IssuerKeys == nil:
		return config("Keys", "or IssuerKeys is required")
	case cfg.Keys != nil && cfg.IssuerKeys != nil:
		return config("Keys", "and IssuerKeys are both set")
	case cfg.IssuerKeys != nil:
		v.issuerKeys = make(map[string]jwks.KeySource, len(cfg.IssuerKeys))
		for _, iss := range v.issuers {
			src := cfg.IssuerKeys[iss]
			if src == nil {
				return config("IssuerKeys", fmt.Sprintf("has no keys for issuer %q", iss))
			}
			v.issuerKeys[iss] = src
		}
		if len(cfg.IssuerKeys) != len(v.issuerKeys) {
			return config("IssuerKeys", "names an issuer that is not in Issuers")
		}
		if cfg.Legacy.Accept {
			return config("Legacy.Accept", "cannot be set with IssuerKeys")
		}
	}
	v.audiences = slices.Clone(cfg.Audiences)
	if len(v.audiences) == 0 && !cfg.InsecureSkipAudienceCheck {
		return config("Audiences", "is required (or InsecureSkipAudienceCheck)")
	}
	if slices.Contains(v.audiences, "") {
		return config("Audiences", "holds an empty string, which no token can name")
	}
	if cfg.Objects == nil && !cfg.SkipObjectCheck {
		return config("Objects", "is required (or SkipObjectCheck)")
	}
	if cfg.Objects != nil && cfg.SkipObjectCheck {
		return config("Objects", "and SkipObjectCheck are both set")
	}
	if cfg.Legacy.Accept && slices.Contains(cfg.Issuers, LegacyIssuer) {
		return config("Issuers", fmt.Sprintf("holds the legacy issuer %q: accept legacy tokens with Legacy.Accept instead", LegacyIssuer))
	}
	if cfg.Legacy.Accept && cfg.Objects != nil && !cfg.Legacy.InsecureSkipSecretCheck {
		if _, ok := cfg.Objects.(LegacySecretGetter); !ok {
			return config("Objects", "must implement LegacySecretGetter to check legacy tokens' Secrets (or set Legacy.InsecureSkipSecretCheck)")
		}
	}
	switch {
	case cfg.Leeway == 0:
		v.leeway = DefaultLeeway
	case cfg.Leeway == NoLeeway:
		v.leeway = 0
	case cfg.Leeway < 0:
		return config("Leeway", fmt.Sprintf("is negative (%s)", cfg.Leeway))
	default:
		v.leeway = cfg.Leeway
	}
	if v.maxTokenBytes < 0 {
		return config("MaxTokenBytes", "is negative")
	}
	if v.maxTokenBytes == 0 {
		v.maxTokenBytes = DefaultMaxTokenBytes
	}
	selector, err := newKeySelector(KeySelectorConfig{AllowedAlgorithms: cfg.AllowedAlgorithms, MaxKeysPerToken: cfg.MaxKeysPerToken}, "ValidatorConfig")
	if err != nil {
		return nil, err
	}
	v.selector = selector
	if v.now == nil {
		v.now = time.Now
	}
	if cfg.Cache != nil {
		c, err := newResultCache(*cfg.Cache)
		if err != nil {
			return nil, err
		}
		v.cache = c
	}
	return v, nil
}

// checkIssuers applies kube-apiserver's rules for --service-account-issuer.
func checkIssuers(issuers []string) error {
	if len(issuers) == 0 {
		return configError("ValidatorConfig.Issuers", "is required", nil)
	}
	for i, iss := range issuers {
		if iss == "" {
			return configError("ValidatorConfig.Issuers", "holds an empty string", nil)
		}
		if slices.Contains(issuers[:i], iss) {
			return configError("ValidatorConfig.Issuers", fmt.Sprintf("names %q twice", iss), nil)
		}
	}
	return nil
}

// Result is what a valid token proves. Callers MUST NOT modify its slices
// or claims: with a cache they are shared between calls.
type Result struct {
	// Identity is the service account, pod, node and credential ID.
	Identity ksa.Identity
	// Audiences are the accepted audiences the token is valid for, in the
	// order they were asked for.
	Audiences []string
	// Issuer, KeyID and Algorithm say who signed the token and how.
	Issuer    string
	KeyID     string
	Algorithm string
	// Claims are the token's claims.
	Claims *Claims
	// Stale is set when the token is past its warnafter time: Kubernetes
	// accepts it but reports it (audit annotation authentication.k8s.io/stale-token).
	Stale *Stale
	// Legacy is true for a legacy Secret-based token.
	Legacy bool
}

// UserInfo returns the user Kubernetes derives from the token.
func (r *Result) UserInfo() ksa.UserInfo { return r.Identity.UserInfo() }

// validation is everything one successful validation allocates.
type validation struct {
	res Result
	claimsBlock
	accepted [2]string
}

// Stale reports a token used after its warnafter time.
type Stale struct {
	WarnAfter time.Time
	// SecondsAfter is how long after warnafter the token was used, in whole
	// seconds, as in Kubernetes' audit annotation.
	SecondsAfter int64
}

// Validate validates a token for the validator's own audiences.
func (v *Validator) Validate(ctx context.Context, token string) (*Result, error) {
	return v.validate(ctx, token, v.audiences)
}

// ValidateFor validates a token for the given audiences instead of the
// validator's own, as a TokenReview with spec.audiences does. The result's
// Audiences are the intersection, in the order of audiences. An empty list
// means the validator's own.
func (v *Validator) ValidateFor(ctx context.Context, token string, audiences []string) (*Result, error) {
	if len(audiences) == 0 {
		audiences = v.audiences
	}
	return v.validate(ctx, token, audiences)
}

func (v *Validator) validate(ctx context.Context, token string, audiences []string) (*Result, error) {
	now := v.now()
	var tr trace
	if len(token) > v.maxTokenBytes {
		err := tooLarge(len(token), v.maxTokenBytes)
		v.observe(now, &tr, nil, false, err)
		return nil, err
	}
	if v.cache != nil {
		if res, ok := v.cache.get(token, audiences, now); ok {
			res.Stale = staleness(res.Claims, now)
			v.observe(now, &tr, res, true, nil)
			return res, nil
		}
	}
	res, err := v.verify(ctx, token, audiences, now, &tr)
	if err != nil {
		v.observe(now, &tr, nil, false, err)
		return nil, err
	}
	if v.cache != nil {
		v.cache.put(token, audiences, now, res)
	}
	v.observe(now, &tr, res, false, nil)
	return res, nil
}

// verify runs kube-apiserver's checks in its order: issuer, key by kid,
// signature, audiences, then (bound tokens) time, live objects and
// staleness, or (legacy tokens) the legacy checks.
func (v *Validator) verify(ctx context.Context, token string, audiences []string, now time.Time, tr *trace) (*Result, error) {
	p, err := split(token)
	if err != nil {
		return nil, err
	}
	// One stack buffer holds the decoded payload, header and signature of
	// a typical token.
	var buf [2048]byte
	payload, err := decodePart("claims", p.payload, buf[:0])
	if err != nil {
		return nil, err
	}
	rest := buf[min(len(payload), len(buf)):]
	// The result, the claims and what they point to come in one
	// allocation; claim strings share one copy of the payload.
	blk := &validation{}
	if err := blk.claimsBlock.parse(string(payload)); err != nil {
		return nil, err
	}
	claims := &blk.claims
	tr.noAud = len(claims.Audience) == 0
	tr.warnAfter = claims.Kubernetes != nil && !claims.Kubernetes.WarnAfter.IsZero()
	legacy := claims.Issuer == LegacyIssuer && v.legacy.Accept
	if !legacy && !slices.Contains(v.issuers, claims.Issuer) {
		return nil, issuerError(claims.Issuer, v.acceptedIssuers())
	}
	tr.issuer = claims.Issuer // one of the configured issuers
	hdrBytes, err := decodePart("header", p.header, rest[:0])
	if err != nil {
		return nil, err
	}
	rest = rest[min(len(hdrBytes), len(rest)):]
	hdr, err := parseHeader(hdrBytes)
	if err != nil {
		return nil, err
	}
	tr.kid, tr.alg = hdr.kid, hdr.alg
	if !isAsymmetric(hdr.alg) {
		return nil, notAsymmetric(hdr.alg)
	}
	if p.signature == "" {
		return nil, noSignature()
	}
	sig, err := decodePart("signature", p.signature, rest[:0])
	if err != nil {
		return nil, err
	}
	key, err := v.verifySignature(ctx, v.keySource(claims.Issuer), hdr, p.signingInput, sig)
	if err != nil {
		return nil, err
	}
	accepted, err := v.checkAudiences(claims.Audience, audiences, legacy, blk.accepted[:0])
	if err != nil {
		return nil, err
	}
	res := &blk.res
	*res = Result{
		Audiences: accepted,
		Issuer:    claims.Issuer,
		KeyID:     key.KeyID,
		Algorithm: hdr.alg,
		Claims:    claims,
		Legacy:    legacy,
	}
	if legacy {
		if err := v.checkLegacy(ctx, claims, token); err != nil {
			return nil, err
		}
		// Only the legacy claims were checked: the identity comes from them
		// alone.
		l := claims.Legacy
		res.Identity = ksa.Identity{ServiceAccount: ksa.ServiceAccount{Namespace: l.Namespace, Name: l.ServiceAccountName, UID: l.ServiceAccountUID}}
	} else {
		if err := v.checkBound(ctx, claims, now); err != nil {
			return nil, err
		}
		res.Identity = claims.Identity()
	}
	res.Stale = staleness(claims, now)
	return res, nil
}

func (v *Validator) acceptedIssuers() []string {
	if v.legacy.Accept {
		return append(slices.Clone(v.issuers), LegacyIssuer)
	}
	return v.issuers
}

// keySource returns the keys that may verify a token of the issuer.
func (v *Validator) keySource(issuer string) jwks.KeySource {
	if v.issuerKeys != nil {
		return v.issuerKeys[issuer]
	}
	return v.keys
}

// verifySignature finds the keys for the token's kid with the validator's
// KeySelector and returns the first that verifies the signature.
func (v *Validator) verifySignature(ctx context.Context, src jwks.KeySource, hdr header, signingInput string, sig []byte) (jwks.Key, error) {
	keys, err := src.Keys(ctx, hdr.kid)
	if err != nil {
		return jwks.Key{}, keyError(hdr.kid, err)
	}
	var errs []error
	var verified jwks.Key
	found := false
	tried, limit := v.selector.walk(keys, hdr.kid, hdr.alg, func(k jwks.Key, refused error) bool {
		if refused != nil {
			errs = append(errs, refused)
			return false
		}
		if err := jws.Verify(hdr.alg, k.Public, signingInput, sig); err != nil {
			if errors.Is(err, jws.ErrAlgorithm) {
				errs = append(errs, algorithmError(hdr.alg, &k, "", err))
			} else {
				errs = append(errs, signatureError(k.KeyID, hdr.alg, err))
			}
			return false
		}
		verified, found = k, true
		return true
	})
	switch {
	case found:
		return verified, nil
	case tried == 0:
		return jwks.Key{}, keyError(hdr.kid, nil)
	case limit != nil:
		errs = append(errs, limit)
	}
	return jwks.Key{}, ksaerrs.Join(prefix, fmt.Sprintf("no key verified the signature (%d tried)", tried), errs)
}

// checkAudiences intersects the token's audiences with the accepted ones,
// keeping the accepted order (Kubernetes' Audiences.Intersect).
func (v *Validator) checkAudiences(tokenAuds, accepted []string, legacy bool, out []string) ([]string, error) {
	if len(tokenAuds) == 0 && (legacy || v.acceptNoAud) {
		tokenAuds = v.audiences
	}
	if v.skipAudience && len(accepted) == 0 {
		return []string{}, nil
	}
	for _, a := range accepted {
		if slices.Contains(tokenAuds, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, audienceError(tokenAuds, accepted)
	}
	return out, nil
}

// checkBound runs the bound-token validator: the claims it requires, time
// with leeway, then live objects.
func (v *Validator) checkBound(ctx context.Context, c *Claims, now time.Time) error {
	k := c.Kubernetes
	switch {
	case k == nil:
		return claimError(claimKubernetes, "is missing")
	case !ksa.IsNamespace(k.Namespace):
		return claimError(claimKubernetes+".namespace", fmt.Sprintf("%q is not a namespace name", k.Namespace))
	case !ksa.IsObjectName(k.ServiceAccount.Name):
		return claimError(claimKubernetes+".serviceaccount.name", fmt.Sprintf("%q is not a service account name", k.ServiceAccount.Name))
	case c.Expiry.IsZero():
		return claimError(claimExp, "is missing")
	}
	if err := checkWebhookClaims(k); err != nil {
		return err
	}
	if !c.NotBefore.IsZero() && now.Add(v.leeway).Before(c.NotBefore) {
		return &TimeError{Claim: claimNbf, Time: c.NotBefore, Now: now, Leeway: v.leeway}
	}
	if now.Add(-v.leeway).After(c.Expiry) {
		return &TimeError{Claim: claimExp, Time: c.Expiry, Now: now, Leeway: v.leeway}
	}
	if !c.IssuedAt.IsZero() && now.Add(v.leeway).Before(c.IssuedAt) {
		return &TimeError{Claim: claimIat, Time: c.IssuedAt, Now: now, Leeway: v.leeway}
	}
	if v.objects != nil {
		return checkObjects(ctx, v.objects, k, now.Add(-v.leeway))
	}
	return nil
}

// staleness reports a token past its warnafter time.
func staleness(c *Claims, now time.Time) *Stale {
	if c.Kubernetes == nil || c.Kubernetes.WarnAfter.IsZero() || c.Kubernetes.WarnAfter.Unix() == 0 {
		return nil
	}
	wa := c.Kubernetes.WarnAfter
	if !now.After(wa) {
		return nil
	}
	return &Stale{WarnAfter: wa, SecondsAfter: now.Unix() - wa.Unix()}
}

// Issuers returns the accepted issuers, the first being the one tokens are
// minted with.
func (v *Validator) Issuers() []string { return slices.Clone(v.issuers) }

// Audiences returns the validator's own audiences.
func (v *Validator) Audiences() []string { return slices.Clone(v.audiences) }
