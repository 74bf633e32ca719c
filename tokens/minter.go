package tokens

import (
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
)

// MinterConfig configures a [Minter]. Optional fields have safe zero values.
type MinterConfig struct {
	// Issuer is the iss of every token (kube-apiserver's first
	// --service-account-issuer). Required.
	Issuer string
	// Signer signs tokens: an *rsa.PrivateKey, *ecdsa.PrivateKey,
	// ed25519.PrivateKey, or any crypto.Signer such as a KMS or HSM key.
	// Required.
	Signer crypto.Signer
	// KeyID is the kid written into the header; empty means the key ID
	// Kubernetes derives from the public key (jwks.KeyID).
	KeyID string
	// Algorithm is the signing algorithm; empty means the key's default
	// (jwks.AlgorithmFor), which is what Kubernetes uses.
	Algorithm string
	// APIAudiences are the audiences of requests that name none, and the
	// set the warnafter extension compares against (kube-apiserver's
	// --api-audiences). Empty means [Issuer], kube-apiserver's default.
	APIAudiences []string
	// MaxExpiration caps requested lifetimes, with a warning, as
	// --service-account-max-token-expiration does. Zero means no cap;
	// otherwise it must lie between one hour and 2^32 seconds.
	MaxExpiration time.Duration
	// ExtendExpiration turns on kube-apiserver's
	// --service-account-extend-token-expiration (on by default there, off by
	// default here): a pod-bound request for exactly
	// WarnOnlyExpirationSeconds whose audiences are all API audiences gets
	// MaxExtendedExpiration of lifetime and a warnafter claim at
	// WarnOnlyExpirationSeconds.
	ExtendExpiration bool
	// MaxExtendedExpiration is the lifetime of extended tokens; zero means
	// DefaultMaxExtendedExpiration (one year).
	MaxExtendedExpiration time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewJTI returns token IDs; nil means NewJTI (random UUIDs).
	NewJTI func() string
}

// Minter mints service-account tokens whose bytes match kube-apiserver's for
// the same inputs. It is safe for concurrent use if its Signer is.
type Minter struct {
	issuer      string
	signer      crypto.Signer
	alg, kid    string
	headerB64   string
	apiAuds     []string
	maxExp      int64
	extend      bool
	maxExtended int64
	now         func() time.Time
	newJTI      func() string
}

// NewMinter checks the config and returns a Minter.
func NewMinter(cfg MinterConfig) (*Minter, error) {
	if cfg.Issuer == "" {
		return nil, configError("MinterConfig.Issuer", "is required", nil)
	}
	if cfg.Signer == nil {
		return nil, configError("MinterConfig.Signer", "is required", nil)
	}
	key, err := jwks.NewKey(cfg.Signer)
	if err != nil {
		return nil, configError("MinterConfig.Signer", "cannot sign tokens", err)
	}
	m := &Minter{
		issuer:  cfg.Issuer,
		signer:  cfg.Signer,
		alg:     key.Algorithm,
		kid:     key.KeyID,
		apiAuds: slices.Clone(cfg.APIAudiences),
		extend:  cfg.ExtendExpiration,
		now:     cfg.Now,
		newJTI:  cfg.NewJTI,
	}
	if cfg.KeyID != "" {
		m.kid = cfg.KeyID
	}
	if cfg.Algorithm != "" {
		if !isAsymmetric(cfg.Algorithm) || !jwks.Fits(cfg.Algorithm, key.Public) {
			return nil, configError("MinterConfig.Algorithm", fmt.Sprintf("%q does not fit the signing key", cfg.Algorithm), algorithmError(cfg.Algorithm, &key, "", nil))
		}
		m.alg = cfg.Algorithm
	}
	if len(m.apiAuds) == 0 {
		m.apiAuds = []string{cfg.Issuer}
	}
	if cfg.MaxExpiration != 0 {
		if cfg.MaxExpiration < time.Hour || cfg.MaxExpiration > MaxExpirationSeconds*time.Second {
			return nil, configError("MinterConfig.MaxExpiration", "must be between 1 hour and 2^32 seconds, as --service-account-max-token-expiration", nil)
		}
		m.maxExp = int64(cfg.MaxExpiration / time.Second)
	}
	m.maxExtended = int64(DefaultMaxExtendedExpiration / time.Second)
	if cfg.MaxExtendedExpiration != 0 {
		if cfg.MaxExtendedExpiration < 0 {
			return nil, configError("MinterConfig.MaxExtendedExpiration", "is negative", nil)
		}
		m.maxExtended = int64(cfg.MaxExtendedExpiration / time.Second)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.newJTI == nil {
		m.newJTI = NewJTI
	}
	// The header is the same for every token: {"alg":...,"kid":...}, the
	// exact members and order kube-apiserver's signer writes.
	h := append([]byte(nil), `{"alg":`...)
	h = jsonx.AppendString(h, m.alg)
	if m.kid != "" {
		h = append(h, `,"kid":`...)
		h = jsonx.AppendString(h, m.kid)
	}
	h = append(h, '}')
	m.headerB64 = base64.RawURLEncoding.EncodeToString(h)
	return m, nil
}

// Token is a minted token with what TokenRequest reports beside it.
type Token struct {
	// Raw is the compact JWS.
	Raw string
	// Claims are the claims that were signed.
	Claims *Claims
	// ExpirationTimestamp is what TokenRequest's status reports: issue time
	// plus the requested (possibly capped) lifetime. For an extended token
	// it is earlier than the exp claim.
	ExpirationTimestamp time.Time
	// Warnings are what kube-apiserver would send as HTTP warnings (a
	// shortened lifetime).
	Warnings []string
}

// Mint mints a bound token following the TokenRequest rules: default and
// limits on the lifetime, the optional cap with a warning, the warnafter
// extension, the binding and the pod's node, and for a webhook
// configuration its audience, attestation and ten-minute lifetime. Errors from the request match
// [ErrInvalidRequest].
func (m *Minter) Mint(ctx context.Context, req Request) (*Token, error) {
	exp, err := req.check()
	if err != nil {
		return nil, err
	}
	webhook := req.BoundObject != nil && req.BoundObject.Kind.IsWebhook()
	if webhook {
		if err := checkWebhookRequest(&req, m.apiAuds); err != nil {
			return nil, err
		}
		// Shortened silently, before the cluster cap (which is never
		// under an hour).
		exp = min(exp, WebhookExpirationSeconds)
	}
	var warnings []string
	if m.maxExp > 0 && exp > m.maxExp {
		warnings = append(warnings, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", exp, m.maxExp))
		exp = m.maxExp
	}
	auds := req.Audiences
	if len(auds) == 0 {
		auds = m.apiAuds
	}
	lifetime, warnAfter := exp, int64(0)
	if m.extend && req.BoundObject != nil && req.BoundObject.Kind == BoundPod &&
		exp == WarnOnlyExpirationSeconds && allIn(auds, m.apiAuds) {
		warnAfter = WarnOnlyExpirationSeconds
		lifetime = m.maxExtended
	}
	now := m.now().Truncate(time.Second)
	sa := req.ServiceAccount
	k := &KubernetesClaims{
		Namespace:      sa.Namespace,
		ServiceAccount: ksa.ObjectRef{Name: sa.Name, UID: sa.UID},
	}
	if b := req.BoundObject; b != nil {
		ref := &ksa.ObjectRef{Name: b.Name, UID: b.UID}
		switch b.Kind {
		case BoundPod:
			k.Pod = ref
			if req.Node != nil {
				node := *req.Node
				k.Node = &node
			}
		case BoundSecret:
			k.Secret = ref
		case BoundNode:
			k.Node = ref
		case BoundValidatingWebhookConfiguration:
			k.ValidatingWebhookConfiguration = ref
		case BoundMutatingWebhookConfiguration:
			k.MutatingWebhookConfiguration = ref
		}
	}
	if webhook {
		k.Attestations = make(map[string][]string, len(req.Attestations))
		for key, vals := range req.Attestations {
			k.Attestations[key] = slices.Clone(vals)
		}
	}
	if warnAfter != 0 {
		k.WarnAfter = now.Add(time.Duration(warnAfter) * time.Second)
	}
	claims := &Claims{
		Issuer:     m.issuer,
		Subject:    sa.Username(),
		Audience:   slices.Clone(auds),
		IssuedAt:   now,
		NotBefore:  now,
		Expiry:     now.Add(time.Duration(lifetime) * time.Second),
		ID:         m.newJTI(),
		Kubernetes: k,
	}
	raw, err := m.Sign(ctx, claims)
	if err != nil {
		return nil, err
	}
	return &Token{
		Raw:                 raw,
		Claims:              claims,
		ExpirationTimestamp: now.Add(time.Duration(exp) * time.Second),
		Warnings:            warnings,
	}, nil
}

// MintLegacy mints a legacy Secret-based token for sa stored in the named
// secret, as kube-controller-manager's tokens controller does (construct
// the minter with Issuer LegacyIssuer for Kubernetes' exact tokens). Legacy
// tokens have no audience and never expire: prefer Mint.
func (m *Minter) MintLegacy(ctx context.Context, sa ksa.ServiceAccount, secretName string) (string, error) {
	if err := sa.Check(); err != nil {
		return "", &RequestError{Field: "serviceAccount", Err: err}
	}
	if sa.UID == "" || secretName == "" {
		return "", &RequestError{Field: "serviceAccount", Reason: "service account UID and secret name are required"}
	}
	return m.Sign(ctx, &Claims{
		Issuer:  m.issuer,
		Subject: sa.Username(),
		Legacy: &LegacyClaims{
			Namespace:          sa.Namespace,
			SecretName:         secretName,
			ServiceAccountName: sa.Name,
			ServiceAccountUID:  sa.UID,
		},
	})
}

// Sign signs claims exactly as given (the issuer included) with the
// minter's key and header. It is the low-level step under Mint, for tests
// and tools that need tokens Mint would refuse to make.
func (m *Minter) Sign(_ context.Context, claims *Claims) (string, error) {
	var buf [1024]byte
	payload := claims.AppendJSON(buf[:0])
	n := len(m.headerB64) + 1 + base64.RawURLEncoding.EncodedLen(len(payload))
	out := make([]byte, 0, n+1+base64.RawURLEncoding.EncodedLen(512))
	out = append(out, m.headerB64...)
	out = append(out, '.')
	out = base64.RawURLEncoding.AppendEncode(out, payload)
	sig, err := jws.Sign(m.alg, m.signer, out)
	if err != nil {
		return "", signError(m.kid, m.alg, err)
	}
	out = append(out, '.')
	out = base64.RawURLEncoding.AppendEncode(out, sig)
	return string(out), nil
}

// Issuer returns the minter's issuer.
func (m *Minter) Issuer() string { return m.issuer }

// KeyID returns the kid the minter writes.
func (m *Minter) KeyID() string { return m.kid }

// Algorithm returns the algorithm the minter signs with.
func (m *Minter) Algorithm() string { return m.alg }

func allIn(subset, set []string) bool {
	for _, s := range subset {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}
