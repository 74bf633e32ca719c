package extsigner

import (
	"crypto"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Defaults and limits of a [Ring].
const (
	// DefaultRefreshHint is the refresh_hint_seconds the ring answers when
	// RingConfig.RefreshHint is zero: kube-apiserver fetches the keys again
	// after a minute.
	DefaultRefreshHint = time.Minute
	// DefaultMaxTokenLifetime is the longest token lifetime when
	// RingConfig.MaxTokenLifetime is zero: a day. It is what Metadata
	// answers, the lifetime kube-apiserver then caps every token at, and
	// how long a key stays published after it stopped signing.
	DefaultMaxTokenLifetime = 24 * time.Hour
	// MinMaxTokenLifetime is the smallest MaxTokenLifetime: kube-apiserver
	// refuses to start with a signer whose maximum is below ten minutes.
	MinMaxTokenLifetime = 10 * time.Minute
	// MaxMaxTokenLifetime is the largest MaxTokenLifetime, 2^32 seconds,
	// kube-apiserver's bound on --service-account-max-token-expiration.
	MaxMaxTokenLifetime = (1 << 32) * time.Second
	// MaxKeys is the most keys a ring holds, verify-only keys included.
	MaxKeys = 64
	// MaxKeyIDBytes is the longest key ID kube-apiserver accepts, in bytes.
	MaxKeyIDBytes = 1024
	// MaxClockSkew is how far the exp of claims may lie beyond the ring's
	// clock plus MaxTokenLifetime: kube-apiserver and the signer read
	// different clocks (the same one, for a signer on the same node).
	MaxClockSkew = time.Minute
)

// Role is what a key of a [Ring] does. Every role publishes the key in
// FetchKeys; only the primary signs.
type Role uint8

// The roles of a key, in the order a rotation moves a key through them.
const (
	// RoleStaged: published, not yet signing; Promote makes it the primary
	// once every kube-apiserver and relying party can know it.
	RoleStaged Role = iota + 1
	// RolePrimary: the one key that signs.
	RolePrimary
	// RolePrevious: signed before, published until every token it signed
	// has expired; then Retire removes it.
	RolePrevious
	// RoleVerifyOnly: published for tokens the ring did not sign (legacy
	// Secret-based tokens signed by kube-controller-manager, tokens signed
	// from key files before the move to the signer); never signs. Usually
	// excluded from discovery (jwks.Key.ExcludeFromDiscovery).
	RoleVerifyOnly
)

// String returns "staged", "primary", "previous" or "verify-only".
func (r Role) String() string {
	switch r {
	case RoleStaged:
		return "staged"
	case RolePrimary:
		return "primary"
	case RolePrevious:
		return "previous"
	case RoleVerifyOnly:
		return "verify-only"
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// RingKey is one key of a [Ring] and its place in a rotation. A ring's
// keys, as [Ring.Keys] returns them, can be saved and given back to
// [NewRing] to restore the ring.
type RingKey struct {
	// Key is the published key: its KeyID, public key, algorithm (RS256
	// for RSA, the curve's ES256/ES384/ES512 for ECDSA: what kube-apiserver
	// accepts) and ExcludeFromDiscovery (only for RoleVerifyOnly keys).
	// With a Signer, a nil Public means Signer.Public() and an empty KeyID
	// means jwks.KeyID, Kubernetes' key ID.
	Key jwks.Key
	// Signer signs with the key: an *ecdsa.PrivateKey or *rsa.PrivateKey, a
	// KMS or HSM key, any crypto.Signer (a [ContextSigner] gets each
	// request's context). Required for RoleStaged and RolePrimary; nil for
	// a key that only verifies.
	Signer crypto.Signer
	// Role is what the key does. Required.
	Role Role
	// Published is when the key was first published; zero means the ring's
	// clock when the ring is made.
	Published time.Time
	// Since is when the key took its Role; zero means the ring's clock when
	// the ring is made.
	Since time.Time
}

// RingConfig configures a [Ring]. The zero value of every field but Keys is
// ready to use.
type RingConfig struct {
	// Keys are the ring's keys, in the order FetchKeys lists them: exactly
	// one RolePrimary, at most MaxKeys in all, no key ID twice. Required.
	Keys []RingKey
	// RefreshHint is the refresh_hint_seconds of FetchKeys: how long
	// kube-apiserver keeps the keys before it asks again. A whole number of
	// seconds, at least one. Zero means DefaultRefreshHint.
	RefreshHint time.Duration
	// MaxTokenLifetime is what Metadata answers (kube-apiserver caps every
	// token's lifetime at it), the latest exp Sign accepts, and how long a
	// previous key stays published before Retire accepts it. A whole number
	// of seconds from MinMaxTokenLifetime to MaxMaxTokenLifetime. Zero means
	// DefaultMaxTokenLifetime. Do not lower it while a key is RolePrevious:
	// that key's tokens were signed under the old maximum.
	MaxTokenLifetime time.Duration
	// MinStaging is how long a key is published before Promote accepts it:
	// long enough for every kube-apiserver to fetch it (one RefreshHint)
	// and for every relying party to read the new key set
	// (kube-apiserver's discovery answers may be cached for up to one more
	// RefreshHint). Zero means twice RefreshHint; less than RefreshHint is
	// refused.
	MinStaging time.Duration
	// DataTimestamp is when the key set last changed, for a ring restored
	// from saved keys; zero means the ring's clock when the ring is made.
	DataTimestamp time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Ring is a signer's key ring: one primary key that signs, and keys
// published for verification only (staged, previous and verify-only keys).
// Rotation moves keys through their roles with [Ring.Stage],
// [Ring.Promote] and [Ring.Retire], refusing the steps that could make a
// live token fail. A Ring is safe for concurrent use; signing reads an
// immutable snapshot and never waits for a rotation step.
type Ring struct {
	refresh, maxLifetime, minStaging time.Duration
	now                              func() time.Time

	mu    sync.Mutex // serialises changes; readers use state
	state atomic.Pointer[ringState]
}

// ringState is one immutable version of the ring.
type ringState struct {
	keys    []RingKey
	primary *signingKey
	stamp   time.Time
}

// signingKey is the primary key prepared for signing.
type signingKey struct {
	kid, alg string
	signer   crypto.Signer
	public   crypto.PublicKey
	// header is the base64url of {"alg":...,"kid":...,"typ":"JWT"}.
	header string
}

// NewRing checks the config and returns a ring. Errors are a
// *ksa.ConfigError (a key it refuses among them, matching
// jwks.ErrUnsupportedKey when jwks refuses it), or match
// [ErrDuplicateKeyID] or [ErrTooManyKeys].
func NewRing(cfg RingConfig) (*Ring, error) {
	r := &Ring{refresh: cfg.RefreshHint, maxLifetime: cfg.MaxTokenLifetime, minStaging: cfg.MinStaging, now: cfg.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.refresh == 0 {
		r.refresh = DefaultRefreshHint
	}
	if r.refresh < time.Second || r.refresh%time.Second != 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.RefreshHint", Reason: fmt.Sprintf("%v is not a whole number of seconds of at least one", r.refresh)}
	}
	if r.maxLifetime == 0 {
		r.maxLifetime = DefaultMaxTokenLifetime
	}
	if r.maxLifetime < MinMaxTokenLifetime || r.maxLifetime > MaxMaxTokenLifetime || r.maxLifetime%time.Second != 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.MaxTokenLifetime", Reason: fmt.Sprintf("%v is not a whole number of seconds from %v to 2^32 seconds", r.maxLifetime, MinMaxTokenLifetime)}
	}
	if r.minStaging == 0 {
		r.minStaging = 2 * r.refresh
	}
	if r.minStaging < r.refresh {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.MinStaging", Reason: fmt.Sprintf("%v is shorter than the refresh hint %v", r.minStaging, r.refresh)}
	}
	if len(cfg.Keys) == 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Keys", Reason: "holds no key"}
	}
	if len(cfg.Keys) > MaxKeys {
		return nil, keyError(ErrTooManyKeys, "", fmt.Sprintf("%d keys, more than %d", len(cfg.Keys), MaxKeys), nil)
	}
	now := r.now()
	keys := make([]RingKey, 0, len(cfg.Keys))
	primaries := 0
	for i, k := range cfg.Keys {
		k, err := prepareKey(k, now)
		if err != nil {
			return nil, &ksa.ConfigError{Field: fmt.Sprintf("extsigner.RingConfig.Keys[%d]", i), Reason: "is refused", Err: err}
		}
		if k.Role == RolePrimary {
			primaries++
		}
		if slices.ContainsFunc(keys, func(o RingKey) bool { return o.Key.KeyID == k.Key.KeyID }) {
			return nil, keyError(ErrDuplicateKeyID, k.Key.KeyID, "appears twice", nil)
		}
		keys = append(keys, k)
	}
	if primaries != 1 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Keys", Reason: fmt.Sprintf("holds %d primary keys, want exactly one", primaries)}
	}
	stamp := cfg.DataTimestamp
	if stamp.IsZero() {
		stamp = now
	}
	r.state.Store(newState(keys, stamp))
	return r, nil
}

// prepareKey checks one key and fills in what its Signer implies.
func prepareKey(k RingKey, now time.Time) (RingKey, error) {
	switch k.Role {
	case RoleStaged, RolePrimary, RolePrevious, RoleVerifyOnly:
	default:
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "no role", nil)
	}
	if k.Signer != nil {
		pub, err := jwks.PublicKey(k.Signer)
		if err != nil {
			return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "no public key from the signer", err)
		}
		if k.Key.Public == nil {
			k.Key.Public = pub
		} else if eq, ok := k.Key.Public.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(pub) {
			return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "public key is not the signer's", nil)
		}
		if k.Key.KeyID == "" {
			if k.Key.KeyID, err = jwks.KeyID(pub); err != nil {
				return k, keyError(ksa.ErrInvalidConfig, "", "no key ID", err)
			}
		}
	} else if k.Role == RoleStaged || k.Role == RolePrimary {
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "a "+k.Role.String()+" key needs a signer", nil)
	}
	if len(k.Key.KeyID) > MaxKeyIDBytes || !utf8.ValidString(k.Key.KeyID) {
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID[:min(len(k.Key.KeyID), 64)], fmt.Sprintf("key ID is not UTF-8 text of at most %d bytes", MaxKeyIDBytes), nil)
	}
	checked, err := k.Key.Check()
	if err != nil {
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "", err)
	}
	k.Key = checked
	if !AllowedAlgorithm(k.Key.Algorithm) {
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, fmt.Sprintf("algorithm %s is not one kube-apiserver accepts (RS256, ES256, ES384, ES512)", k.Key.Algorithm), nil)
	}
	if k.Key.ExcludeFromDiscovery && k.Role != RoleVerifyOnly {
		return k, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "only verify-only keys may be excluded from discovery", nil)
	}
	if k.Published.IsZero() {
		k.Published = now
	}
	if k.Since.IsZero() {
		k.Since = now
	}
	return k, nil
}

// newState builds an immutable ring version from checked keys.
func newState(keys []RingKey, stamp time.Time) *ringState {
	s := &ringState{keys: slices.Clip(keys), stamp: stamp}
	for _, k := range keys {
		if k.Role != RolePrimary {
			continue
		}
		h := append([]byte(nil), `{"alg":`...)
		h = jsonx.AppendString(h, k.Key.Algorithm)
		h = append(h, `,"kid":`...)
		h = jsonx.AppendString(h, k.Key.KeyID)
		h = append(h, `,"typ":"JWT"}`...)
		s.primary = &signingKey{
			kid: k.Key.KeyID, alg: k.Key.Algorithm, signer: k.Signer, public: k.Key.Public,
			header: b64.EncodeToString(h),
		}
	}
	return s
}

// KeySet is what FetchKeys answers: the published keys, in order, when
// they last changed, and how long kube-apiserver may keep them.
type KeySet struct {
	Keys          []jwks.Key
	DataTimestamp time.Time
	RefreshHint   time.Duration
}

// KeySet returns the keys FetchKeys publishes: every key of the ring, in
// order (verify-only keys with their ExcludeFromDiscovery), with the time
// the set last changed. DataTimestamp changes exactly when the set does
// (Stage, AddVerifyOnly, Retire; not Promote, which changes no published
// key), and only forward. The slice is the caller's.
func (r *Ring) KeySet() KeySet { return r.state.Load().keySet(r.refresh) }

func (s *ringState) keySet(refresh time.Duration) KeySet {
	keys := make([]jwks.Key, len(s.keys))
	for i, k := range s.keys {
		keys[i] = k.Key
	}
	return KeySet{Keys: keys, DataTimestamp: s.stamp, RefreshHint: refresh}
}

// Keys returns the ring's keys with their roles, in order: what
// RingConfig.Keys takes to restore the ring. The slice is the caller's.
func (r *Ring) Keys() []RingKey { return slices.Clone(r.state.Load().keys) }

// Primary returns the published key of the primary, the key that signs.
func (r *Ring) Primary() jwks.Key {
	s := r.state.Load()
	for _, k := range s.keys {
		if k.Role == RolePrimary {
			return k.Key
		}
	}
	return jwks.Key{} // unreachable: a ring always has a primary
}

// RefreshHint returns the refresh hint FetchKeys answers.
func (r *Ring) RefreshHint() time.Duration { return r.refresh }

// MaxTokenLifetime returns the longest token lifetime: what Metadata
// answers.
func (r *Ring) MaxTokenLifetime() time.Duration { return r.maxLifetime }

// MinStaging returns how long a key is published before Promote accepts it.
func (r *Ring) MinStaging() time.Duration { return r.minStaging }

// retireWait is how long after a key stopped signing every token it signed
// has expired, for kube-apiserver and ksa alike: the longest lifetime, the
// clock skew Sign allows on exp, the leeway validators allow after exp
// (both one minute), and a second, the resolution of exp.
func (r *Ring) retireWait() time.Duration {
	return r.maxLifetime + MaxClockSkew + tokens.DefaultLeeway + time.Second
}
