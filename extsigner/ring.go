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
	"github.com/ksa-go/ksa/internal/ownkey"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/rotation"
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
	// MaxKeys is the most keys a ring holds, verify-only keys included:
	// the rotation model's bound.
	MaxKeys = rotation.MaxKeys
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
	// one RolePrimary, at most MaxKeys in all, no key ID twice. Keys or
	// Schedule is required, not both. A ring made from Keys changes only by
	// [Ring.Stage], [Ring.AddVerifyOnly], [Ring.Promote] and [Ring.Retire].
	Keys []RingKey
	// Schedule, in place of Keys, are the ring's keys with the times at
	// which each is published, becomes the primary and is retired (see
	// [ScheduledKey]): the ring follows it on its clock, each transition
	// at its written time, so that replicas given the same schedule answer
	// alike at every instant; [Ring.Update] replaces it (a ring file
	// reloaded). The schedule must name a primary at the clock's time when
	// the ring is made, and obey the rotation's waits (see [ScheduledKey]).
	Schedule []ScheduledKey
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
	// A ring that follows a Schedule derives it from the schedule: it must
	// be zero then.
	DataTimestamp time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnChange, when set, is called after each change of the ring's keys or
	// roles (a transition of its schedule, an Update, a rotation step),
	// with what the ring is after it. It runs while the ring holds its
	// lock, on the goroutine of the call that made or noticed the change:
	// it must be quick, and must not call the ring's Update, Stage,
	// AddVerifyOnly, Promote or Retire.
	OnChange func(RingChange)
}

// Ring is a signer's key ring: one primary key that signs, and keys
// published for verification only (staged, previous and verify-only keys).
// Rotation moves keys through their roles with [Ring.Stage],
// [Ring.Promote] and [Ring.Retire], refusing the steps that could make a
// live token fail. A Ring is safe for concurrent use; signing reads an
// immutable snapshot and never waits for a rotation step.
type Ring struct {
	settings
	now      func() time.Time
	onChange func(RingChange)

	mu    sync.Mutex // serialises changes; readers use state
	state atomic.Pointer[ringState]
}

// settings are what a ring keeps whatever its keys: an Update must not
// change them.
type settings struct {
	refresh, maxLifetime, minStaging time.Duration
}

// ringState is one immutable version of the ring.
type ringState struct {
	keys    []entry
	primary *signingKey
	stamp   time.Time
	// sched is the schedule of a ring that follows one: the state is the
	// schedule at an instant, valid until next (zero: for ever).
	sched *schedule
	next  time.Time
	// changedAt is the schedule's latest time at or before the state's
	// instant: when a change it wrote took effect.
	changedAt time.Time
	// served is, for a ring that follows a schedule, when the ring first
	// published each key of the state, on its clock (see carryServed).
	served map[string]time.Time
}

// entry is a key of the ring and, if it has a signer, the signer prepared.
type entry struct {
	RingKey
	sk *signingKey
}

// NewRing checks the config and returns a ring. Errors are a
// *ksa.ConfigError (a key it refuses among them, matching
// jwks.ErrUnsupportedKey when jwks refuses it), or match
// [ErrDuplicateKeyID] or [ErrTooManyKeys].
func NewRing(cfg RingConfig) (*Ring, error) {
	st, err := newSettings(cfg.RefreshHint, cfg.MaxTokenLifetime, cfg.MinStaging)
	if err != nil {
		return nil, err
	}
	r := &Ring{settings: st, now: cfg.Now, onChange: cfg.OnChange}
	if r.now == nil {
		r.now = time.Now
	}
	now := r.now()
	switch {
	case cfg.Schedule != nil && cfg.Keys != nil:
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Schedule", Reason: "and Keys are both set: give one"}
	case cfg.Schedule != nil:
		if !cfg.DataTimestamp.IsZero() {
			return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.DataTimestamp", Reason: "is set for a ring that follows a schedule, which derives it"}
		}
		sc, err := newSchedule(cfg.Schedule, st, now)
		if err != nil {
			return nil, err
		}
		s := sc.at(now)
		s.served = carryServed(nil, s, time.Time{})
		r.state.Store(s)
		return r, nil
	}
	if len(cfg.Keys) == 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.RingConfig.Keys", Reason: "holds no key"}
	}
	if len(cfg.Keys) > MaxKeys {
		return nil, keyError(ErrTooManyKeys, "", fmt.Sprintf("%d keys, more than %d", len(cfg.Keys), MaxKeys), nil)
	}
	keys := make([]entry, 0, len(cfg.Keys))
	primaries := 0
	for i, k := range cfg.Keys {
		e, err := prepareKey(k, now)
		if err != nil {
			return nil, &ksa.ConfigError{Field: fmt.Sprintf("extsigner.RingConfig.Keys[%d]", i), Reason: "is refused", Err: err}
		}
		if e.Role == RolePrimary {
			primaries++
		}
		if slices.ContainsFunc(keys, func(o entry) bool { return o.Key.KeyID == e.Key.KeyID }) {
			return nil, keyError(ErrDuplicateKeyID, e.Key.KeyID, "appears twice", nil)
		}
		keys = append(keys, e)
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

// newSettings checks and defaults the settings of a ring.
func newSettings(refresh, maxLifetime, minStaging time.Duration) (settings, error) {
	st := settings{refresh: refresh, maxLifetime: maxLifetime, minStaging: minStaging}
	if st.refresh == 0 {
		st.refresh = DefaultRefreshHint
	}
	if st.refresh < time.Second || st.refresh%time.Second != 0 {
		return st, &ksa.ConfigError{Field: "extsigner.RingConfig.RefreshHint", Reason: fmt.Sprintf("%v is not a whole number of seconds of at least one", st.refresh)}
	}
	if st.maxLifetime == 0 {
		st.maxLifetime = DefaultMaxTokenLifetime
	}
	if st.maxLifetime < MinMaxTokenLifetime || st.maxLifetime > MaxMaxTokenLifetime || st.maxLifetime%time.Second != 0 {
		return st, &ksa.ConfigError{Field: "extsigner.RingConfig.MaxTokenLifetime", Reason: fmt.Sprintf("%v is not a whole number of seconds from %v to 2^32 seconds", st.maxLifetime, MinMaxTokenLifetime)}
	}
	if st.minStaging == 0 {
		st.minStaging = 2 * st.refresh
	}
	if st.minStaging < st.refresh {
		return st, &ksa.ConfigError{Field: "extsigner.RingConfig.MinStaging", Reason: fmt.Sprintf("%v is shorter than the refresh hint %v", st.minStaging, st.refresh)}
	}
	return st, nil
}

// prepareKey checks one key, fills in what its Signer implies and
// prepares the signer.
func prepareKey(k RingKey, now time.Time) (entry, error) {
	switch k.Role {
	case RoleStaged, RolePrimary, RolePrevious, RoleVerifyOnly:
	default:
		return entry{}, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "no role", nil)
	}
	if k.Signer == nil && (k.Role == RoleStaged || k.Role == RolePrimary) {
		return entry{}, keyError(ksa.ErrInvalidConfig, k.Key.KeyID, "a "+k.Role.String()+" key needs a signer", nil)
	}
	key, sk, err := checkKey(k.Key, k.Signer, k.Role == RoleVerifyOnly)
	if err != nil {
		return entry{}, err
	}
	k.Key = key
	if k.Published.IsZero() {
		k.Published = now
	}
	if k.Since.IsZero() {
		k.Since = now
	}
	return entry{RingKey: k, sk: sk}, nil
}

// checkKey checks a published key and its signer, if any, filling in the
// public key and key ID the signer implies; verifyOnly keys alone may be
// excluded from discovery. It returns the signer prepared for signing.
func checkKey(key jwks.Key, signer crypto.Signer, verifyOnly bool) (jwks.Key, *signingKey, error) {
	if c, ok := signer.(*checkedSigner); ok {
		if c.checked(key) {
			return c.key, c.sk, nil
		}
		signer = c.opened // another key: checked again
	}
	var own crypto.Signer
	var known bool
	if signer != nil {
		pub, err := jwks.PublicKey(signer)
		if err != nil {
			return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "no public key from the signer", err)
		}
		// The ring's own copy of a standard-library key, whose public half
		// is the ring's too: nothing the caller does to its key value
		// afterwards changes what the ring signs or publishes.
		if own, known, err = ownkey.Copy(signer); err != nil {
			return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "inconsistent private key", err)
		}
		if known {
			if !equalKeys(own.Public(), pub) {
				return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "public key is not the signer's", nil)
			}
			pub = own.Public()
		}
		if key.Public != nil && !equalKeys(key.Public, pub) {
			return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "public key is not the signer's", nil)
		}
		key.Public = pub
		if key.KeyID == "" {
			if key.KeyID, err = jwks.KeyID(pub); err != nil {
				return key, nil, keyError(ksa.ErrInvalidConfig, "", "no key ID", err)
			}
		}
	}
	if len(key.KeyID) > MaxKeyIDBytes || !utf8.ValidString(key.KeyID) {
		return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID[:min(len(key.KeyID), 64)], fmt.Sprintf("key ID is not UTF-8 text of at most %d bytes", MaxKeyIDBytes), nil)
	}
	checked, err := key.Check()
	if err != nil {
		return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "", err)
	}
	key = checked
	if !AllowedAlgorithm(key.Algorithm) {
		return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, fmt.Sprintf("algorithm %s is not one kube-apiserver accepts (RS256, ES256, ES384, ES512)", key.Algorithm), nil)
	}
	if key.ExcludeFromDiscovery && !verifyOnly {
		return key, nil, keyError(ksa.ErrInvalidConfig, key.KeyID, "only verify-only keys may be excluded from discovery", nil)
	}
	if signer == nil {
		return key, nil, nil
	}
	sk, err := newSigningKey(key, own, known)
	if err != nil {
		return key, nil, err
	}
	return key, sk, nil
}

// equalKeys reports whether two public keys are equal.
func equalKeys(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}

// newState builds an immutable ring version from checked keys.
func newState(keys []entry, stamp time.Time) *ringState {
	s := &ringState{keys: slices.Clip(keys), stamp: stamp}
	for _, k := range keys {
		if k.Role == RolePrimary {
			s.primary = k.sk
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
func (r *Ring) KeySet() KeySet { return r.current(r.now()).keySet(r.refresh) }

func (s *ringState) keySet(refresh time.Duration) KeySet {
	keys := make([]jwks.Key, len(s.keys))
	for i, k := range s.keys {
		keys[i] = k.Key
	}
	return KeySet{Keys: keys, DataTimestamp: s.stamp, RefreshHint: refresh}
}

// Keys returns the ring's keys with their roles, in order: what
// RingConfig.Keys takes to restore the ring. The slice is the caller's.
func (r *Ring) Keys() []RingKey { return r.current(r.now()).ringKeys() }

func (s *ringState) ringKeys() []RingKey {
	keys := make([]RingKey, len(s.keys))
	for i, k := range s.keys {
		keys[i] = k.RingKey
	}
	return keys
}

// Primary returns the published key of the primary, the key that signs.
func (r *Ring) Primary() jwks.Key {
	s := r.current(r.now())
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

// RetireWait returns how long after a key stopped signing every token it
// signed has expired: MaxTokenLifetime, MaxClockSkew, tokens.DefaultLeeway
// and a second. A key may be retired no sooner after its successor became
// the primary.
func (r *Ring) RetireWait() time.Duration { return r.policy().RetireWait() }
