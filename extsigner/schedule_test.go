package extsigner_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/rotation"
)

// rotationSchedule is a rotation written in advance, around t0: old signs
// from the start and is retired once its tokens have expired; next is
// published at t0, signs from t0 plus the minimum staging time; a legacy
// public key is published for verification only.
type rotationSchedule struct {
	t0                      time.Time
	old, next, legacy       string // key IDs
	promoteAt, retireOldAt  time.Time
	keys                    []extsigner.ScheduledKey
	refresh, lifetime, wait time.Duration
}

func newRotationSchedule(t testing.TB, t0 time.Time) *rotationSchedule {
	t.Helper()
	s := &rotationSchedule{t0: t0, refresh: time.Minute, lifetime: time.Hour}
	s.wait = s.lifetime + extsigner.MaxClockSkew + time.Minute + time.Second
	s.promoteAt = t0.Add(2 * s.refresh)
	s.retireOldAt = s.promoteAt.Add(s.wait)
	legacy := excluded(t, key("p384").Public())
	s.keys = []extsigner.ScheduledKey{
		{Signer: key("p256"), Primary: time.Unix(0, 0), Retired: s.retireOldAt},
		{Signer: key("rsa2048"), Published: t0, Primary: s.promoteAt},
		{Key: legacy},
	}
	s.old, s.next, s.legacy = kidOf2(t, key("p256")), kidOf2(t, key("rsa2048")), legacy.KeyID
	return s
}

func kidOf2(t testing.TB, s crypto.Signer) string {
	t.Helper()
	kid, err := jwks.KeyID(s.Public())
	require.NoError(t, err)
	return kid
}

func (s *rotationSchedule) ring(t testing.TB, clk *clock, onChange func(extsigner.RingChange)) *extsigner.Ring {
	t.Helper()
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: s.keys, RefreshHint: s.refresh, MaxTokenLifetime: s.lifetime, Now: clk.Now, OnChange: onChange})
	require.NoError(t, err)
	return ring
}

func kids(keys []jwks.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyID
	}
	return out
}

// TestScheduleTransitions: a ring that follows a schedule changes at the
// written instants, not a nanosecond before: the keys published, the
// primary, the roles, and a data timestamp that is the schedule's own
// time.
func TestScheduleTransitions(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newRotationSchedule(t, t0)
	clk := newClock()
	clk.Set(t0.Add(-time.Hour))
	ring := s.ring(t, clk, nil)
	type want struct {
		published []string
		primary   string
		roles     []extsigner.Role
		stamp     time.Time
	}
	for _, tt := range []struct {
		name string
		at   time.Time
		want want
	}{
		{name: "before the rotation", at: t0.Add(-time.Nanosecond),
			want: want{[]string{s.old, s.legacy}, s.old, []extsigner.Role{extsigner.RolePrimary, extsigner.RoleVerifyOnly}, time.Unix(0, 0).UTC()}},
		{name: "next key published", at: t0,
			want: want{[]string{s.old, s.next, s.legacy}, s.old, []extsigner.Role{extsigner.RolePrimary, extsigner.RoleStaged, extsigner.RoleVerifyOnly}, t0}},
		{name: "just before the switch", at: s.promoteAt.Add(-time.Nanosecond),
			want: want{[]string{s.old, s.next, s.legacy}, s.old, []extsigner.Role{extsigner.RolePrimary, extsigner.RoleStaged, extsigner.RoleVerifyOnly}, t0}},
		{name: "the switch", at: s.promoteAt,
			want: want{[]string{s.old, s.next, s.legacy}, s.next, []extsigner.Role{extsigner.RolePrevious, extsigner.RolePrimary, extsigner.RoleVerifyOnly}, t0}},
		{name: "just before the old key is retired", at: s.retireOldAt.Add(-time.Nanosecond),
			want: want{[]string{s.old, s.next, s.legacy}, s.next, []extsigner.Role{extsigner.RolePrevious, extsigner.RolePrimary, extsigner.RoleVerifyOnly}, t0}},
		{name: "the old key retired", at: s.retireOldAt,
			want: want{[]string{s.next, s.legacy}, s.next, []extsigner.Role{extsigner.RolePrimary, extsigner.RoleVerifyOnly}, s.retireOldAt}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk.Set(tt.at)
			set := ring.KeySet()
			assert.Equal(t, tt.want.published, kids(set.Keys))
			assert.Equal(t, tt.want.stamp, set.DataTimestamp)
			assert.Equal(t, tt.want.primary, ring.Primary().KeyID)
			var roles []extsigner.Role
			for _, k := range ring.Keys() {
				roles = append(roles, k.Role)
			}
			assert.Equal(t, tt.want.roles, roles)
			signed, err := ring.Sign(t.Context(), encodeClaims(testClaims(tt.at, time.Hour)))
			require.NoError(t, err)
			assert.Equal(t, tt.want.primary, signed.KeyID, "the primary signs")
		})
	}
}

// TestScheduleReplicasAgree: two rings given the same schedule, made at
// different times (replicas started apart), answer alike at every instant:
// keys, order and data timestamp.
func TestScheduleReplicasAgree(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newRotationSchedule(t, t0)
	early, late := newClock(), newClock()
	early.Set(t0.Add(-time.Hour))
	late.Set(s.promoteAt.Add(time.Minute))
	a, b := s.ring(t, early, nil), s.ring(t, late, nil)
	for _, at := range []time.Time{s.promoteAt.Add(time.Minute), s.retireOldAt.Add(-time.Second), s.retireOldAt, s.retireOldAt.Add(time.Hour)} {
		early.Set(at)
		late.Set(at)
		assert.Equal(t, a.KeySet(), b.KeySet(), "at %s", at)
		assert.Equal(t, a.Keys(), b.Keys(), "at %s", at)
	}
}

// TestScheduleOnChange: each transition is reported once, with the time
// the schedule wrote (not the time it was noticed) and the primary before
// and after.
func TestScheduleOnChange(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newRotationSchedule(t, t0)
	clk := newClock()
	clk.Set(t0.Add(-time.Hour))
	var changes []extsigner.RingChange
	ring := s.ring(t, clk, func(c extsigner.RingChange) { changes = append(changes, c) })
	ring.KeySet()
	assert.Empty(t, changes, "no change before t0")

	clk.Set(s.promoteAt.Add(5 * time.Second)) // two transitions passed unseen
	ring.KeySet()
	ring.Primary()
	require.Len(t, changes, 1)
	assert.Equal(t, extsigner.RingChange{Cause: extsigner.ChangeSchedule, At: s.promoteAt, Primary: s.next, PreviousPrimary: s.old, Keys: ring.Keys(), DataTimestamp: t0}, changes[0])

	clk.Set(s.retireOldAt)
	ring.KeySet()
	require.Len(t, changes, 2)
	assert.Equal(t, s.retireOldAt, changes[1].At)
	assert.Equal(t, s.next, changes[1].PreviousPrimary)
	assert.Len(t, changes[1].Keys, 2)
}

// TestScheduleDefaults: the documented meaning of zero times and
// settings in a schedule.
func TestScheduleDefaults(t *testing.T) {
	clk := newClock()
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Schedule: []extsigner.ScheduledKey{{Signer: key("p256"), Primary: time.Unix(0, 0)}},
		Now:      clk.Now,
	})
	require.NoError(t, err)
	set := ring.KeySet()
	assert.Equal(t, time.Unix(0, 0).UTC(), set.DataTimestamp, "no time at or before now: the Unix epoch")
	assert.Equal(t, extsigner.DefaultRefreshHint, set.RefreshHint)
	assert.Equal(t, extsigner.DefaultMaxTokenLifetime, ring.MaxTokenLifetime())
	keys := ring.Keys()
	require.Len(t, keys, 1)
	assert.Equal(t, extsigner.RolePrimary, keys[0].Role)
	assert.True(t, keys[0].Published.IsZero(), "published from the start")

	clk.Advance(100 * 365 * 24 * time.Hour)
	assert.Equal(t, set, ring.KeySet(), "zero Retired: never retired")
}

// TestNewRingScheduleRefused: every rule of a schedule, at its boundary.
func TestNewRingScheduleRefused(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	now := t0
	start := time.Unix(0, 0)
	minStaging := 2 * time.Minute
	wait := extsigner.DefaultMaxTokenLifetime + extsigner.MaxClockSkew + time.Minute + time.Second
	p256, rsa, other := key("p256"), key("rsa2048"), key("p256-other")
	signs := func(s crypto.Signer, published, primary, retired time.Time) extsigner.ScheduledKey {
		return extsigner.ScheduledKey{Signer: s, Published: published, Primary: primary, Retired: retired}
	}
	var zero time.Time
	tests := []struct {
		name     string
		schedule []extsigner.ScheduledKey
		wantErr  error // nil: accepted
		wantMsg  string
	}{
		{name: "one key", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero)}},
		{name: "no key", schedule: []extsigner.ScheduledKey{}, wantErr: ksa.ErrInvalidConfig, wantMsg: "holds no key"},
		{name: "no primary time", schedule: []extsigner.ScheduledKey{signs(p256, zero, zero, zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "names no key that signs"},
		{name: "the first primary a second from now", schedule: []extsigner.ScheduledKey{signs(p256, zero, now.Add(time.Second), zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "names no primary at 2027-03-01T09:00:00Z"},
		{name: "the first primary now", schedule: []extsigner.ScheduledKey{signs(p256, zero, now, zero)}},
		{name: "two primaries at once", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(rsa, zero, start, zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "Schedule[1].Primary 1970-01-01T00:00:00Z is also the primary time of keys[0]"},
		{name: "staged for exactly the minimum", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(rsa, t0, t0.Add(minStaging), zero)}},
		{name: "staged a second too short", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(rsa, t0, t0.Add(minStaging-time.Second), zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "make it primary at 2027-03-01T09:02:00Z or later"},
		{name: "primary before published", schedule: []extsigner.ScheduledKey{signs(p256, t0, t0.Add(-time.Second), zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "before the key is published"},
		{name: "retired when its tokens have expired", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, t0.Add(wait)), signs(rsa, zero, t0, zero)}},
		{name: "retired a second before its tokens expire", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, t0.Add(wait-time.Second)), signs(rsa, zero, t0, zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "retire it at 2027-03-02T09:02:01Z or later"},
		{name: "the last primary retired", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, t0.Add(365*24*time.Hour))}, wantErr: ksa.ErrInvalidConfig, wantMsg: "the last key that signs"},
		{name: "retired before published", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(rsa, t0, zero, t0)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "not after the key is published"},
		{name: "a staged key retired at once", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(rsa, t0, zero, t0.Add(time.Second))}},
		{name: "a verify-only key with a primary time", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), {Key: mustKey(t, rsa.Public()), Primary: t0}}, wantErr: ksa.ErrInvalidConfig, wantMsg: "cannot sign"},
		{name: "the same key twice", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), signs(p256, zero, zero, zero)}, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "the same public key under another key ID", schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero), {Key: jwks.Key{KeyID: "other", Public: p256.Public()}}}, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "a key ID twice", schedule: []extsigner.ScheduledKey{{Signer: p256, Key: jwks.Key{KeyID: "k"}, Primary: start}, {Signer: other, Key: jwks.Key{KeyID: "k"}}}, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "excluded signing key", schedule: []extsigner.ScheduledKey{{Signer: p256, Key: jwks.Key{ExcludeFromDiscovery: true}, Primary: start}}, wantErr: ksa.ErrInvalidConfig},
		{name: "Ed25519", schedule: []extsigner.ScheduledKey{signs(key("ed25519"), zero, start, zero)}, wantErr: ksa.ErrInvalidConfig},
		{name: "a time before 1970", schedule: []extsigner.ScheduledKey{signs(p256, time.Unix(-1, 0), start, zero)}, wantErr: ksa.ErrInvalidConfig, wantMsg: "Schedule[0].Published 1969-12-31T23:59:59Z is not between 1970 and the year 9999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: tt.schedule, Now: func() time.Time { return now }})
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, ring)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Equal(t, 1, strings.Count(err.Error(), "extsigner: "), "one prefix: %s", err)
			assert.NotContains(t, err.Error(), "rotation", "said once, in the ring's words: %s", err)
		})
	}
	_, err := extsigner.NewRing(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero)}, Keys: []extsigner.RingKey{primary(p256)}})
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig, "Keys and Schedule")
	_, err = extsigner.NewRing(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{signs(p256, zero, start, zero)}, DataTimestamp: now})
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig, "a data timestamp for a schedule")
}

// TestNewRingScheduleRule: a schedule refused matches the rule of the
// rotation model it breaks, and carries its earliest safe time.
func TestNewRingScheduleRule(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	_, err := extsigner.NewRing(extsigner.RingConfig{Now: func() time.Time { return t0 }, Schedule: []extsigner.ScheduledKey{
		{Signer: key("p256"), Primary: time.Unix(0, 0)},
		{Signer: key("rsa2048"), Published: t0, Primary: t0.Add(time.Minute)},
	}})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	require.ErrorIs(t, err, rotation.ErrStaging)
	var re *rotation.RuleError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, t0.Add(2*time.Minute), re.SafeAt)
	assert.Equal(t, 1, re.Index)
}

// TestScheduleRefusesRotationSteps: a ring that follows a schedule changes
// only by its schedule.
func TestScheduleRefusesRotationSteps(t *testing.T) {
	s := newRotationSchedule(t, time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC))
	clk := newClock()
	clk.Set(s.promoteAt)
	ring := s.ring(t, clk, nil)
	before := ring.KeySet()
	_, err := ring.Stage(key("p521"), "")
	assert.ErrorIs(t, err, extsigner.ErrInvalidTransition)
	_, err = ring.AddVerifyOnly(excluded(t, key("p521").Public()))
	assert.ErrorIs(t, err, extsigner.ErrInvalidTransition)
	assert.ErrorIs(t, ring.Promote(s.old), extsigner.ErrInvalidTransition)
	assert.ErrorIs(t, ring.Retire(s.legacy), extsigner.ErrInvalidTransition)
	assert.Equal(t, before, ring.KeySet())
}

// TestSignUsesOwnCopy: a standard-library key is copied when the ring
// takes it, so a caller that changes its key value afterwards changes
// nothing the ring signs (before, the ring signed with the caller's value
// and its self-check refused every signature).
func TestSignUsesOwnCopy(t *testing.T) {
	k := generateP256(t)
	clk := newClock()
	ring := newRing(t, clk, k)
	*k = *generateP256(t) // the caller's key value is now another key
	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	signed, err := ring.Sign(t.Context(), claims)
	require.NoError(t, err)
	pub := ring.Primary()
	assert.NoError(t, verifies(pub.Algorithm, pub.Public, signed.Header, claims, signed.Signature))
}

// TestNewRingRefusesInconsistentKey: a standard-library key whose halves
// disagree is refused when the ring takes it, not at the first Sign.
func TestNewRingRefusesInconsistentKey(t *testing.T) {
	k := generateP256(t)
	other := generateP256(t)
	k.PublicKey = other.PublicKey
	_, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{primary(k)}})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "public key is not the signer's")
}

// TestProbe: a probe signs with the primary and reports a key store that
// fails as Sign does.
func TestProbe(t *testing.T) {
	clk := newClock()
	require.NoError(t, newRing(t, clk, key("p256")).Probe(t.Context()))
	calls := 0
	errKMSDown := errors.New("kms: connection refused")
	ring := newRing(t, clk, extsigner.SignerFunc(key("p256").Public(), func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) {
		calls++
		return nil, errKMSDown
	}))
	err := ring.Probe(t.Context())
	var serr *extsigner.SignError
	require.ErrorAs(t, err, &serr)
	assert.ErrorIs(t, err, extsigner.ErrSignerFailed)
	assert.ErrorIs(t, err, errKMSDown)
	assert.Equal(t, ring.Primary().KeyID, serr.KeyID)
	assert.Equal(t, 1, calls)
}

// TestUpdateUnderLoad: replacing the schedule while Signs run loses no
// request, and every signature verifies with a key FetchKeys published at
// that moment.
func TestUpdateUnderLoad(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	clk := newClock()
	clk.Set(t0)
	a, b := key("p256"), key("rsa2048")
	scheduleWith := func(extra int) []extsigner.ScheduledKey {
		keys := []extsigner.ScheduledKey{{Signer: a, Primary: time.Unix(0, 0)}, {Signer: b}}
		for i := range extra {
			k := mustKey(t, key("p384-"+string(rune('a'+i))).Public())
			k.ExcludeFromDiscovery = true
			keys = append(keys, extsigner.ScheduledKey{Key: k})
		}
		return keys
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: scheduleWith(0), Now: clk.Now})
	require.NoError(t, err)
	claims := encodeClaims(testClaims(t0, time.Hour))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 8 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				signed, err := ring.Sign(t.Context(), claims)
				if !assert.NoError(t, err, "sign %d of goroutine %d", n, g) {
					return
				}
				set := ring.KeySet()
				assert.Contains(t, kids(set.Keys), signed.KeyID)
			}
		})
	}
	for i := range 200 {
		require.NoError(t, ring.Update(extsigner.RingConfig{Schedule: scheduleWith(i % 5)}))
	}
	close(stop)
	wg.Wait()
	assert.Len(t, ring.KeySet().Keys, 2+199%5)
}

func generateP256(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}
