package extsigner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
)

// TestUpdate: a new schedule applies at once and whole when it cannot make
// a live token fail; otherwise it is refused, says when it becomes safe,
// and the ring is left as it was.
func TestUpdate(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	start := time.Unix(0, 0)
	wait := time.Hour + extsigner.MaxClockSkew + time.Minute + time.Second
	a, b, c := key("p256"), key("rsa2048"), key("p384")
	// The ring: a signed until t0, b signs since t0 (staged from t0-1h),
	// c is staged since t0.
	current := []extsigner.ScheduledKey{
		{Signer: a, Primary: start, Retired: t0.Add(wait)},
		{Signer: b, Published: t0.Add(-time.Hour), Primary: t0},
		{Signer: c, Published: t0},
	}
	now := t0.Add(10 * time.Minute)
	tests := []struct {
		name     string
		schedule []extsigner.ScheduledKey
		settings func(*extsigner.RingConfig)
		wantErr  error // nil: applied
		readyAt  time.Time
		primary  string
	}{
		{name: "the same schedule", schedule: current, primary: kidOf2(t, b)},
		{name: "a legacy key added", schedule: append(append([]extsigner.ScheduledKey{}, current...), extsigner.ScheduledKey{Key: excluded(t, key("p521").Public())}), primary: kidOf2(t, b)},
		{name: "the staged key withdrawn", schedule: current[:2], primary: kidOf2(t, b)},
		{name: "the staged key signs next week", schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: t0.Add(-time.Hour), Primary: t0, Retired: t0.Add(7 * 24 * time.Hour).Add(wait)}, {Signer: c, Published: t0, Primary: t0.Add(7 * 24 * time.Hour)}}, primary: kidOf2(t, b)},
		{name: "the previous key withdrawn while its tokens live", schedule: current[1:], wantErr: extsigner.ErrTooEarly, readyAt: t0.Add(wait)},
		{name: "the previous key retired sooner", schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: now.Add(time.Minute)}, current[1], current[2]},
			wantErr: ksa.ErrInvalidConfig},
		{name: "the primary withdrawn", schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start}}, wantErr: extsigner.ErrTooEarly, readyAt: now.Add(wait)},
		{name: "the staged key signs now: staged for ten minutes", schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: t0.Add(-time.Hour), Primary: t0, Retired: now.Add(wait)}, {Signer: c, Published: t0, Primary: now}}, primary: kidOf2(t, c)},
		{name: "an unknown key signs now", schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: t0.Add(-time.Hour), Primary: t0, Retired: now.Add(wait)}, {Signer: key("p521"), Primary: now}},
			wantErr: extsigner.ErrTooEarly, readyAt: now.Add(2 * time.Minute)},
		{name: "a published key ID given to another key", schedule: []extsigner.ScheduledKey{current[0], current[1], {Signer: key("p384-other"), Key: jwks.Key{KeyID: kidOf2(t, c)}, Published: t0}},
			wantErr: extsigner.ErrDuplicateKeyID},
		{name: "another lifetime", schedule: current, settings: func(c *extsigner.RingConfig) { c.MaxTokenLifetime = 2 * time.Hour }, wantErr: ksa.ErrInvalidConfig},
		{name: "another refresh hint", schedule: current, settings: func(c *extsigner.RingConfig) { c.RefreshHint = 2 * time.Minute }, wantErr: ksa.ErrInvalidConfig},
		{name: "keys in place of a schedule", settings: func(c *extsigner.RingConfig) { c.Keys = []extsigner.RingKey{primary(a)} }, wantErr: ksa.ErrInvalidConfig},
		{name: "no primary now", schedule: []extsigner.ScheduledKey{{Signer: a, Primary: now.Add(time.Hour)}}, wantErr: ksa.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			clk.Set(now)
			var changes []extsigner.RingChange
			ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: current, MaxTokenLifetime: time.Hour, Now: clk.Now,
				OnChange: func(c extsigner.RingChange) { changes = append(changes, c) }})
			require.NoError(t, err)
			before, beforeKeys := ring.KeySet(), ring.Keys()
			cfg := extsigner.RingConfig{Schedule: tt.schedule, MaxTokenLifetime: time.Hour}
			if tt.settings != nil {
				tt.settings(&cfg)
			}
			err = ring.Update(cfg)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if !tt.readyAt.IsZero() {
					var rerr *extsigner.RotationError
					require.ErrorAs(t, err, &rerr)
					assert.Equal(t, tt.readyAt, rerr.ReadyAt)
				}
				assert.Equal(t, before, ring.KeySet(), "nothing applied")
				assert.Equal(t, beforeKeys, ring.Keys(), "nothing applied")
				assert.Empty(t, changes)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.primary, ring.Primary().KeyID)
			require.Len(t, changes, 1)
			assert.Equal(t, extsigner.ChangeUpdate, changes[0].Cause)
			assert.Equal(t, now, changes[0].At)
			signed, err := ring.Sign(t.Context(), encodeClaims(testClaims(now, time.Hour)))
			require.NoError(t, err)
			assert.Equal(t, tt.primary, signed.KeyID)
		})
	}
}

// TestUpdateKeysRing: a ring made from Keys changes by rotation steps, not
// Update.
func TestUpdateKeysRing(t *testing.T) {
	ring := newRing(t, newClock(), key("p256"))
	err := ring.Update(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{{Signer: key("p256"), Primary: time.Unix(0, 0)}}})
	assert.ErrorIs(t, err, extsigner.ErrInvalidTransition)
}
