package extsigner

import (
	"crypto"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
)

// Stage adds a key that is published but does not sign yet: the first step
// of a rotation. keyID may be empty for Kubernetes' key ID of the public
// key (jwks.KeyID). It returns the published key. Errors match
// [ErrDuplicateKeyID], [ErrTooManyKeys], ksa.ErrInvalidConfig or
// jwks.ErrUnsupportedKey.
func (r *Ring) Stage(signer crypto.Signer, keyID string) (jwks.Key, error) {
	if signer == nil {
		return jwks.Key{}, keyError(ksa.ErrInvalidConfig, keyID, "no signer", nil)
	}
	return r.add(RingKey{Signer: signer, Key: jwks.Key{KeyID: keyID}, Role: RoleStaged})
}

// AddVerifyOnly publishes a key that never signs: the public key of
// kube-controller-manager's legacy tokens (usually with
// ExcludeFromDiscovery, so that only kube-apiserver uses it), or a key
// tokens were signed with before the move to this signer. Errors are as
// for [Ring.Stage].
func (r *Ring) AddVerifyOnly(key jwks.Key) (jwks.Key, error) {
	return r.add(RingKey{Key: key, Role: RoleVerifyOnly})
}

func (r *Ring) add(k RingKey) (jwks.Key, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	s := r.state.Load()
	if s.sched != nil {
		return jwks.Key{}, keyError(ErrInvalidTransition, k.Key.KeyID, "the ring follows a schedule: add the key to the schedule (its ring file) instead", nil)
	}
	e, err := prepareKey(k, now)
	if err != nil {
		return jwks.Key{}, err
	}
	k = e.RingKey
	if len(s.keys) >= MaxKeys {
		return jwks.Key{}, keyError(ErrTooManyKeys, k.Key.KeyID, "the ring is full", nil)
	}
	if s.index(k.Key.KeyID) >= 0 {
		return jwks.Key{}, keyError(ErrDuplicateKeyID, k.Key.KeyID, "already in the ring", nil)
	}
	keys := append(slices.Clone(s.keys), e)
	r.store(s, newState(keys, nextStamp(s.stamp, now)), now)
	return k.Key, nil
}

// Promote makes a key the primary, the key that signs; the primary before
// it becomes a previous key, still published. It refuses, with an error
// matching [ErrTooEarly], a key published for less than MinStaging (some
// kube-apiserver or relying party may not know it yet), and with
// [ErrInvalidTransition] a key that cannot sign (verify-only, or without a
// Signer). A staged key and a previous key (to roll back) are accepted;
// promoting the primary does nothing.
func (r *Ring) Promote(keyID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	s := r.state.Load()
	i := s.index(keyID)
	if i < 0 {
		return keyError(ErrUnknownKeyID, keyID, "not in the ring", nil)
	}
	k := s.keys[i].RingKey
	if s.sched != nil {
		return &RotationError{Step: "promote", KeyID: keyID, Role: k.Role, Reason: "the ring follows a schedule: give the key its primary time in the schedule (its ring file) instead", Kind: ErrInvalidTransition}
	}
	ready, err := r.promoteAt(k)
	if err != nil {
		return err
	}
	if k.Role == RolePrimary {
		return nil
	}
	if now.Before(ready) {
		return &RotationError{Step: "promote", KeyID: keyID, Role: k.Role, Reason: "published for less than the minimum staging time", ReadyAt: ready, Kind: ErrTooEarly}
	}
	keys := slices.Clone(s.keys)
	for j := range keys {
		if keys[j].Role == RolePrimary {
			keys[j].Role, keys[j].Since = RolePrevious, now
		}
	}
	keys[i].Role, keys[i].Since = RolePrimary, now
	// The published set is the same: the data timestamp stays.
	r.store(s, newState(keys, s.stamp), now)
	return nil
}

// Retire removes a key from the ring: the last step of a rotation. It
// refuses, with an error matching [ErrTooEarly], a previous key whose
// tokens may still be live (until MaxTokenLifetime, MaxClockSkew,
// tokens.DefaultLeeway and a second have passed since it stopped signing),
// and with
// [ErrInvalidTransition] the primary. Staged keys (a rotation called off)
// and verify-only keys are removed at once: the ring cannot know when the
// tokens a verify-only key verifies expire (legacy tokens never do), so
// that is the operator's call.
func (r *Ring) Retire(keyID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	s := r.state.Load()
	i := s.index(keyID)
	if i < 0 {
		return keyError(ErrUnknownKeyID, keyID, "not in the ring", nil)
	}
	k := s.keys[i].RingKey
	if s.sched != nil {
		return &RotationError{Step: "retire", KeyID: keyID, Role: k.Role, Reason: "the ring follows a schedule: give the key its retirement time in the schedule (its ring file) instead", Kind: ErrInvalidTransition}
	}
	ready, err := r.retireAt(k)
	if err != nil {
		return err
	}
	if now.Before(ready) {
		return &RotationError{Step: "retire", KeyID: keyID, Role: k.Role, Reason: "tokens it signed may still be live", ReadyAt: ready, Kind: ErrTooEarly}
	}
	keys := slices.Delete(slices.Clone(s.keys), i, i+1)
	r.store(s, newState(keys, nextStamp(s.stamp, now)), now)
	return nil
}

// PromoteAt returns when [Ring.Promote] accepts the key. Errors match
// [ErrUnknownKeyID] or [ErrInvalidTransition] (a key that never can).
func (r *Ring) PromoteAt(keyID string) (time.Time, error) {
	s := r.current(r.now())
	i := s.index(keyID)
	if i < 0 {
		return time.Time{}, keyError(ErrUnknownKeyID, keyID, "not in the ring", nil)
	}
	return r.promoteAt(s.keys[i].RingKey)
}

// RetireAt returns when [Ring.Retire] accepts the key: the zero time for
// a key it accepts at once (staged and verify-only keys). Errors match
// [ErrUnknownKeyID] or [ErrInvalidTransition] (the primary).
func (r *Ring) RetireAt(keyID string) (time.Time, error) {
	s := r.current(r.now())
	i := s.index(keyID)
	if i < 0 {
		return time.Time{}, keyError(ErrUnknownKeyID, keyID, "not in the ring", nil)
	}
	return r.retireAt(s.keys[i].RingKey)
}

func (r *Ring) promoteAt(k RingKey) (time.Time, error) {
	switch {
	case k.Role == RoleVerifyOnly:
		return time.Time{}, &RotationError{Step: "promote", KeyID: k.Key.KeyID, Role: k.Role, Reason: "it never signs", Kind: ErrInvalidTransition}
	case k.Signer == nil:
		return time.Time{}, &RotationError{Step: "promote", KeyID: k.Key.KeyID, Role: k.Role, Reason: "it has no signer", Kind: ErrInvalidTransition}
	}
	return k.Published.Add(r.policy().Propagation), nil
}

func (r *Ring) retireAt(k RingKey) (time.Time, error) {
	switch k.Role {
	case RolePrimary:
		return time.Time{}, &RotationError{Step: "retire", KeyID: k.Key.KeyID, Role: k.Role, Reason: "it signs; promote another key first", Kind: ErrInvalidTransition}
	case RolePrevious:
		return k.Since.Add(r.policy().RetireWait()), nil
	}
	return time.Time{}, nil // staged and verify-only keys: at once
}

// index returns the position of the key with keyID, or -1.
func (s *ringState) index(keyID string) int {
	return slices.IndexFunc(s.keys, func(k entry) bool { return k.Key.KeyID == keyID })
}

// store makes s the ring's state after old, with r.mu held, and reports
// the change.
func (r *Ring) store(old, s *ringState, now time.Time) {
	r.state.Store(s)
	r.changed(old, s, ChangeRotation, now)
}

// nextStamp is the data timestamp after a change at now: now, or just after
// the previous one if the clock has not moved past it, so that it always
// changes and only forward.
func nextStamp(prev, now time.Time) time.Time {
	if now.After(prev) {
		return now
	}
	return prev.Add(time.Nanosecond)
}
