package extsigner_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// signToken signs claims issued at the ring's clock for lifetime and
// returns the token.
func signToken(t testing.TB, ring *extsigner.Ring, now time.Time, lifetime time.Duration) string {
	t.Helper()
	claims := encodeClaims(testClaims(now, lifetime))
	signed, err := ring.Sign(t.Context(), claims)
	require.NoError(t, err)
	return signed.Header + "." + claims + "." + signed.Signature
}

func kidOf(t testing.TB, token string) string {
	t.Helper()
	h, err := signertest.CheckHeader(strings.Split(token, ".")[0])
	require.NoError(t, err)
	return h.KeyID
}

// TestRotation walks the written procedure: stage, wait, promote, wait,
// retire. Every step taken too early is refused with the time it becomes
// safe; every token signed before a step validates after it (with the key
// set the ring publishes then) until it expires.
func TestRotation(t *testing.T) {
	clk := newClock()
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys:             []extsigner.RingKey{primary(key("p256"))},
		RefreshHint:      30 * time.Second,
		MaxTokenLifetime: time.Hour,
		Now:              clk.Now,
	})
	require.NoError(t, err)
	old := ring.Primary().KeyID
	lifetime := ring.MaxTokenLifetime()
	var live []string // tokens signed so far, all signed for the longest lifetime
	sign := func() string {
		tok := signToken(t, ring, clk.Now(), lifetime)
		live = append(live, tok)
		return tok
	}
	// No live token fails: each validates, or has expired by its own exp.
	allValid := func(step string) {
		t.Helper()
		for i, tok := range live {
			_, err := validate(t, ring.KeySet(), tok, clk.Now())
			if err != nil {
				require.ErrorIs(t, err, tokens.ErrExpired, "%s: token #%d", step, i)
			}
		}
	}
	sign()
	stamp0 := ring.KeySet().DataTimestamp

	// 1. Stage: published, not signing.
	clk.Advance(time.Minute)
	next, err := ring.Stage(key("rsa2048"), "")
	require.NoError(t, err)
	assert.Equal(t, jwks.RS256, next.Algorithm)
	assert.Equal(t, old, ring.Primary().KeyID, "a staged key does not sign")
	assert.Equal(t, clk.Now(), ring.KeySet().DataTimestamp, "staging changes the set")
	assert.True(t, ring.KeySet().DataTimestamp.After(stamp0))
	assert.Equal(t, old, kidOf(t, sign()))
	allValid("staged")

	// 2. Promote too early: refused, with when it is safe.
	ready := clk.Now().Add(ring.MinStaging())
	at, err := ring.PromoteAt(next.KeyID)
	require.NoError(t, err)
	assert.Equal(t, ready, at)
	clk.Set(ready.Add(-time.Nanosecond))
	err = ring.Promote(next.KeyID)
	var rerr *extsigner.RotationError
	require.ErrorAs(t, err, &rerr)
	assert.ErrorIs(t, err, extsigner.ErrTooEarly)
	assert.Equal(t, ready, rerr.ReadyAt)
	assert.Equal(t, extsigner.RoleStaged, rerr.Role)

	// 3. Promote once staged for MinStaging: the new key signs, the old
	// one is still published; the published set (and its timestamp) is
	// the same.
	clk.Set(ready)
	// The old key's last token, with the latest exp Sign accepts.
	lastClaims := encodeClaims(testClaims(clk.Now(), lifetime+extsigner.MaxClockSkew))
	signed, err := ring.Sign(t.Context(), lastClaims)
	require.NoError(t, err)
	last := signed.Header + "." + lastClaims + "." + signed.Signature
	live = append(live, last)
	stamp := ring.KeySet().DataTimestamp
	require.NoError(t, ring.Promote(next.KeyID))
	assert.Equal(t, next.KeyID, ring.Primary().KeyID)
	assert.Equal(t, stamp, ring.KeySet().DataTimestamp, "promoting changes no published key")
	assert.Len(t, ring.KeySet().Keys, 2)
	assert.Equal(t, next.KeyID, kidOf(t, sign()))
	allValid("promoted")
	require.NoError(t, ring.Promote(next.KeyID), "promoting the primary does nothing")

	// 4. Retire too early: the old key's last tokens may be live until
	// lifetime, clock skew and leeway have passed.
	stopped := clk.Now()
	retireAt := stopped.Add(lifetime + extsigner.MaxClockSkew + tokens.DefaultLeeway + time.Second)
	at, err = ring.RetireAt(old)
	require.NoError(t, err)
	assert.Equal(t, retireAt, at)
	clk.Set(retireAt.Add(-time.Second)) // exp + leeway of the last token
	_, err = validate(t, ring.KeySet(), last, clk.Now())
	require.NoError(t, err, "the old key's last token is live until then")
	allValid("at the last token's last second")
	require.ErrorIs(t, ring.Retire(old), extsigner.ErrTooEarly)
	clk.Set(retireAt.Add(-time.Nanosecond))
	err = ring.Retire(old)
	require.ErrorAs(t, err, &rerr)
	assert.ErrorIs(t, err, extsigner.ErrTooEarly)
	assert.Equal(t, retireAt, rerr.ReadyAt)

	// 5. Retire: the set changes; tokens of the old key have all expired.
	clk.Set(retireAt)
	before := ring.KeySet()
	require.NoError(t, ring.Retire(old))
	assert.Len(t, ring.KeySet().Keys, 1)
	assert.Equal(t, clk.Now(), ring.KeySet().DataTimestamp)
	for i, tok := range live {
		if kidOf(t, tok) == old {
			_, err := validate(t, before, tok, clk.Now())
			assert.ErrorIs(t, err, tokens.ErrExpired, "token #%d had expired when its key went", i)
		}
	}
}

func TestRotationRefusals(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	cur := ring.Primary().KeyID
	legacy, err := ring.AddVerifyOnly(excluded(t, key("rsa2048").Public()))
	require.NoError(t, err)
	migrated := mustKey(t, key("p384").Public())
	migrated.KeyID = "from-the-key-file"
	_, err = ring.AddVerifyOnly(migrated)
	require.NoError(t, err)

	tests := []struct {
		name    string
		step    func() error
		wantErr error
	}{
		{name: "retire the primary", step: func() error { return ring.Retire(cur) }, wantErr: extsigner.ErrInvalidTransition},
		{name: "promote a verify-only key", step: func() error { return ring.Promote(legacy.KeyID) }, wantErr: extsigner.ErrInvalidTransition},
		{name: "promote an unknown key", step: func() error { return ring.Promote("nope") }, wantErr: extsigner.ErrUnknownKeyID},
		{name: "retire an unknown key", step: func() error { return ring.Retire("nope") }, wantErr: extsigner.ErrUnknownKeyID},
		{name: "stage a key already there", step: func() error { _, err := ring.Stage(key("p256"), ""); return err }, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "stage a key ID already there", step: func() error { _, err := ring.Stage(key("p521"), "from-the-key-file"); return err }, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "stage without a signer", step: func() error { _, err := ring.Stage(nil, "x"); return err }, wantErr: ksa.ErrInvalidConfig},
		{name: "stage an Ed25519 key", step: func() error { _, err := ring.Stage(key("ed25519"), ""); return err }, wantErr: ksa.ErrInvalidConfig},
		{name: "add an excluded key ID twice", step: func() error { _, err := ring.AddVerifyOnly(legacy); return err }, wantErr: extsigner.ErrDuplicateKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ring.Keys()
			err := tt.step()
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, before, ring.Keys(), "a refused step changes nothing")
		})
	}
	_, err = ring.PromoteAt(legacy.KeyID)
	assert.ErrorIs(t, err, extsigner.ErrInvalidTransition)
	_, err = ring.RetireAt(cur)
	assert.ErrorIs(t, err, extsigner.ErrInvalidTransition)
	_, err = ring.RetireAt("nope")
	assert.ErrorIs(t, err, extsigner.ErrUnknownKeyID)
	_, err = ring.PromoteAt("nope")
	assert.ErrorIs(t, err, extsigner.ErrUnknownKeyID)

	// Verify-only and staged keys go at once.
	require.NoError(t, ring.Retire(legacy.KeyID))
	staged, err := ring.Stage(key("p521"), "")
	require.NoError(t, err)
	require.NoError(t, ring.Retire(staged.KeyID), "a rotation called off")
	assert.Len(t, ring.Keys(), 2)
}

// TestRollback: a previous key comes back as primary at once (it never
// stopped being published).
func TestRollback(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	old := ring.Primary().KeyID
	next, err := ring.Stage(key("p384"), "")
	require.NoError(t, err)
	clk.Advance(ring.MinStaging())
	require.NoError(t, ring.Promote(next.KeyID))
	require.NoError(t, ring.Promote(old), "back to the previous key")
	assert.Equal(t, old, ring.Primary().KeyID)
	for _, k := range ring.Keys() {
		if k.Key.KeyID == next.KeyID {
			assert.Equal(t, extsigner.RolePrevious, k.Role)
			assert.Equal(t, clk.Now(), k.Since)
		}
	}
}

// TestDataTimestampMovesForward: with a clock that stands still, each
// change still moves the data timestamp, forward.
func TestDataTimestampMovesForward(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	prev := ring.KeySet().DataTimestamp
	for _, name := range []string{"p384", "p521", "rsa2048"} {
		_, err := ring.Stage(key(name), "")
		require.NoError(t, err)
		cur := ring.KeySet().DataTimestamp
		assert.True(t, cur.After(prev), "%s: %v after %v", name, cur, prev)
		prev = cur
	}
	clk.Set(clk.Now().Add(-time.Hour)) // a clock set back
	require.NoError(t, ring.Retire(mustKey(t, key("p384").Public()).KeyID))
	assert.True(t, ring.KeySet().DataTimestamp.After(prev))
}

func TestRotationErrorMessage(t *testing.T) {
	err := &extsigner.RotationError{Step: "retire", KeyID: "a", Role: extsigner.RolePrevious, Reason: "tokens it signed may still be live",
		ReadyAt: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC), Kind: extsigner.ErrTooEarly}
	assert.Equal(t, `extsigner: cannot retire previous key "a": tokens it signed may still be live (safe from 2027-01-02T03:04:05Z)`, err.Error())
	assert.True(t, errors.Is(err, extsigner.ErrTooEarly))
	assert.False(t, errors.Is(err, extsigner.ErrInvalidTransition))
}

// TestPromoteKeyWithoutSigner: a previous key restored without its
// private half (a migrated key file) verifies but never signs again.
func TestPromoteKeyWithoutSigner(t *testing.T) {
	clk := newClock()
	migrated := mustKey(t, key("p384").Public())
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys: []extsigner.RingKey{primary(key("p256")), {Key: migrated, Role: extsigner.RolePrevious, Published: clk.Now().Add(-time.Hour)}},
		Now:  clk.Now,
	})
	require.NoError(t, err)
	var rerr *extsigner.RotationError
	require.ErrorAs(t, ring.Promote(migrated.KeyID), &rerr)
	assert.ErrorIs(t, rerr, extsigner.ErrInvalidTransition)
	assert.Equal(t, "promote", rerr.Step)
}
