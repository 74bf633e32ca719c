package extsigner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/rotation"
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

// TestUpdateBackdatedKey: a key an update adds with a Published time in
// the past is first published by the ring at the update, so it may sign
// no sooner than MinStaging after that (whatever the file says), whether
// the same update or a later one makes it primary; a ring made with a
// schedule under way trusts the written times.
func TestUpdateBackdatedKey(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	start := time.Unix(0, 0)
	wait := time.Hour + extsigner.MaxClockSkew + time.Minute + time.Second
	staging := 2 * time.Minute
	a, b, c := key("p256"), key("rsa2048"), key("p384")
	current := []extsigner.ScheduledKey{{Signer: a, Primary: start}}
	// b is written as published an hour ago.
	backdated := t0.Add(-time.Hour)
	tests := []struct {
		name string
		// steps are updates, each at t0 plus its offset, in order; the last
		// one's result is checked.
		steps   []step
		wantErr error
		readyAt time.Time
		primary *extsigner.ScheduledKey
	}{
		{name: "added, then primary a second later", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: backdated}}},
			{at: time.Second, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(time.Second).Add(wait)}, {Signer: b, Published: backdated, Primary: t0.Add(time.Second)}}},
		}, wantErr: extsigner.ErrTooEarly, readyAt: t0.Add(staging)},
		{name: "added, primary a second later in the same update", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(time.Second).Add(wait)}, {Signer: b, Published: backdated, Primary: t0.Add(time.Second)}}},
		}, wantErr: extsigner.ErrTooEarly, readyAt: t0.Add(staging)},
		{name: "added from the start, primary now", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(wait)}, {Signer: b, Primary: t0}}},
		}, wantErr: extsigner.ErrTooEarly, readyAt: t0.Add(staging)},
		{name: "added, primary once staged by the ring", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: backdated}}},
			{at: staging, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(staging).Add(wait)}, {Signer: b, Published: backdated, Primary: t0.Add(staging)}}},
		}, primary: &extsigner.ScheduledKey{Signer: b}},
		{name: "added, primary in the file's future once staged by the ring", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(staging).Add(wait)}, {Signer: b, Published: backdated, Primary: t0.Add(staging)}}},
		}, primary: &extsigner.ScheduledKey{Signer: a}},
		{name: "published on time by the schedule, primary as written", steps: []step{
			{at: 0, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(time.Hour).Add(staging).Add(wait)}, {Signer: b, Published: t0.Add(time.Hour), Primary: t0.Add(time.Hour).Add(staging)}}},
			{at: time.Hour + staging, schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(time.Hour).Add(staging).Add(wait)}, {Signer: b, Published: t0.Add(time.Hour), Primary: t0.Add(time.Hour).Add(staging)}, {Signer: c}}},
		}, primary: &extsigner.ScheduledKey{Signer: b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			clk.Set(t0)
			ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: current, MaxTokenLifetime: time.Hour, Now: clk.Now})
			require.NoError(t, err)
			for i, s := range tt.steps {
				clk.Set(t0.Add(s.at))
				before := ring.KeySet()
				err = ring.Update(extsigner.RingConfig{Schedule: s.schedule, MaxTokenLifetime: time.Hour})
				if i < len(tt.steps)-1 {
					require.NoError(t, err, "step %d", i)
					continue
				}
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					var rerr *extsigner.RotationError
					require.ErrorAs(t, err, &rerr)
					assert.Equal(t, tt.readyAt, rerr.ReadyAt)
					assert.Equal(t, kidOf2(t, b), rerr.KeyID)
					assert.Equal(t, before, ring.KeySet(), "nothing applied")
					assert.Equal(t, kidOf2(t, a), ring.Primary().KeyID)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, kidOf2(t, tt.primary.Signer), ring.Primary().KeyID)
			}
		})
	}

	// A signer restarted during a rotation follows the written times: the
	// ring is made with b published an hour ago and primary in a minute,
	// and an update that changes nothing else is applied.
	clk := newClock()
	clk.Set(t0)
	restarted := []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(time.Minute).Add(wait)}, {Signer: b, Published: backdated, Primary: t0.Add(time.Minute)}}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: restarted, MaxTokenLifetime: time.Hour, Now: clk.Now})
	require.NoError(t, err)
	clk.Set(t0.Add(time.Second))
	require.NoError(t, ring.Update(extsigner.RingConfig{Schedule: append(restarted, extsigner.ScheduledKey{Signer: c}), MaxTokenLifetime: time.Hour}))
	clk.Set(t0.Add(time.Minute))
	assert.Equal(t, kidOf2(t, b), ring.Primary().KeyID)
}

// step is one update of a test: its schedule, at a time.
type step struct {
	at       time.Duration
	schedule []extsigner.ScheduledKey
}

// TestUpdateRefusalStep: an update refused names the step it would take
// too early, the key and its role: a key withdrawn or retired while its
// tokens may be live, a key that would sign before it is staged; the
// refusal matches the rule of the rotation model too.
func TestUpdateRefusalStep(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	start := time.Unix(0, 0)
	wait := time.Hour + extsigner.MaxClockSkew + time.Minute + time.Second
	a, b := key("p256"), key("rsa2048")
	current := []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: t0.Add(wait)}, {Signer: b, Published: t0.Add(-time.Hour), Primary: t0}}
	now := t0.Add(10 * time.Minute)
	tests := []struct {
		name     string
		schedule []extsigner.ScheduledKey
		want     extsigner.RotationError
		rule     error
	}{
		{name: "the previous key withdrawn", schedule: current[1:], rule: rotation.ErrRetireEarly,
			want: extsigner.RotationError{Step: "withdraw", KeyID: kidOf2(t, a), Role: extsigner.RolePrevious, Reason: "tokens it signed may still be live; keep it in the schedule", ReadyAt: t0.Add(wait)}},
		// Written as if b took over in 1970, a may be retired now: but the
		// ring's a signed until t0.
		{name: "the previous key retired now", schedule: []extsigner.ScheduledKey{{Signer: a, Primary: start, Retired: now}, {Signer: b, Primary: start.Add(time.Second)}}, rule: rotation.ErrRetireEarly,
			want: extsigner.RotationError{Step: "retire", KeyID: kidOf2(t, a), Role: extsigner.RolePrevious, Reason: "at 2027-03-01T09:10:00Z, while tokens it signed may still be live", ReadyAt: t0.Add(wait)}},
		{name: "a key new to the ring signs in a minute", schedule: []extsigner.ScheduledKey{current[0], {Signer: b, Published: t0.Add(-time.Hour), Primary: t0, Retired: now.Add(time.Minute).Add(wait)}, {Signer: key("p384"), Published: t0, Primary: now.Add(time.Minute)}},
			rule: rotation.ErrStaging,
			want: extsigner.RotationError{Step: "promote", KeyID: kidOf2(t, key("p384")), Role: extsigner.RoleStaged, Reason: "at 2027-03-01T09:11:00Z: published by the ring for less than the minimum staging time", ReadyAt: now.Add(2 * time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			clk.Set(now)
			ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: current, MaxTokenLifetime: time.Hour, Now: clk.Now})
			require.NoError(t, err)
			err = ring.Update(extsigner.RingConfig{Schedule: tt.schedule, MaxTokenLifetime: time.Hour})
			var rerr *extsigner.RotationError
			require.ErrorAs(t, err, &rerr)
			tt.want.Kind = extsigner.ErrTooEarly
			assert.Equal(t, tt.want, *rerr)
			assert.NotErrorIs(t, err, tt.rule, "a RotationError, not the model's")
		})
	}
}
