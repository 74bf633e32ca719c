package rotation_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/rotation"
)

// at parses an RFC 3339 time of a test.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// TestNextScheduledRotation runs a rotation run by run, as the command's
// scheduled rotation does (a ring whose tokens live an hour, two minutes
// of skew and leeway and a second; --every 720h --propagation 1h
// --publish-delay 1m): each run applies the one action Next finds, and
// publishes to the store's copy when the action says so; copies reverted
// between runs (an interrupted run) are repaired. The times and plans are
// those the command prints. At every run, the copy holds every key whose
// tokens may be live.
func TestNextScheduledRotation(t *testing.T) {
	p := rotation.Policy{Propagation: 2 * time.Minute, MaxLifetime: time.Hour, Skew: 2*time.Minute + time.Second}
	c := rotation.Cadence{Every: 720 * time.Hour, Delay: time.Minute, Propagation: time.Hour}
	s, err := rotation.New(p, []rotation.Key{{ID: "old", Published: at(t, "2026-01-01T00:00:00Z"), Signs: at(t, "2026-01-01T00:00:00Z")}})
	require.NoError(t, err)
	store := []string{"old"}
	saved := map[string][]string{}
	// signed are the keys that signed, with when they stopped (zero: they
	// sign).
	type step struct {
		name, now string
		// revertTo restores the store as it was before that step.
		revertTo string
		stage    rotation.Stage
		kind     rotation.Kind
		at       string // the action's time
		why      rotation.Reason
		missing  []string
		extra    []string
		plan     []rotation.Step
	}
	steps := []step{
		{name: "steady, too young", now: "2026-01-20T00:00:00Z", stage: rotation.StageSteady, kind: rotation.Wait, at: "2026-01-31T00:00:00Z", why: rotation.WaitEvery,
			plan: []rotation.Step{
				{At: at(t, "2026-01-31T00:00:00Z"), Kind: rotation.PublishNext, Signer: "old"},
				{At: at(t, "2026-01-31T01:00:00Z"), Kind: rotation.SignNext, Signer: "old"},
				{At: at(t, "2026-01-31T02:03:01Z"), Kind: rotation.RetireOld, Keys: []string{"old"}},
			}},
		{name: "steady, next key added", now: "2026-01-31T00:00:00Z", stage: rotation.StageSteady, kind: rotation.PublishNext, at: "2026-01-31T00:00:00Z",
			plan: []rotation.Step{
				{At: at(t, "2026-01-31T01:00:00Z"), Kind: rotation.SignNext, Signer: "old"},
				{At: at(t, "2026-01-31T02:03:01Z"), Kind: rotation.RetireOld, Keys: []string{"old"}},
				{At: at(t, "2026-03-02T01:01:00Z"), Kind: rotation.PublishNext},
			}},
		{name: "next published, propagating", now: "2026-01-31T00:30:00Z", stage: rotation.StageNextPublished, kind: rotation.Wait, at: "2026-01-31T01:00:00Z", why: rotation.WaitPropagation,
			plan: []rotation.Step{
				{At: at(t, "2026-01-31T01:00:00Z"), Kind: rotation.SignNext, Keys: []string{"next"}, Signer: "old"},
				{At: at(t, "2026-01-31T02:03:01Z"), Kind: rotation.RetireOld, Keys: []string{"old"}, Signer: "next"},
				{At: at(t, "2026-03-02T01:01:00Z"), Kind: rotation.PublishNext, Signer: "next"},
			}},
		{name: "store reverted: repaired, the wait restarts", now: "2026-01-31T00:40:00Z", revertTo: "steady, next key added", stage: rotation.StageNextPublished,
			kind: rotation.Repair, at: "2026-01-31T00:40:00Z", missing: []string{"next"},
			plan: []rotation.Step{
				{At: at(t, "2026-01-31T01:40:00Z"), Kind: rotation.SignNext, Keys: []string{"next"}, Signer: "old"},
				{At: at(t, "2026-01-31T02:43:01Z"), Kind: rotation.RetireOld, Keys: []string{"old"}, Signer: "next"},
				{At: at(t, "2026-03-02T01:41:00Z"), Kind: rotation.PublishNext, Signer: "next"},
			}},
		{name: "wait restarted", now: "2026-01-31T01:00:00Z", stage: rotation.StageNextPublished, kind: rotation.Wait, at: "2026-01-31T01:40:00Z", why: rotation.WaitPropagation},
		{name: "next key signs after the publish delay", now: "2026-01-31T01:40:00Z", stage: rotation.StageNextPublished, kind: rotation.SignNext, at: "2026-01-31T01:41:00Z",
			plan: []rotation.Step{
				{At: at(t, "2026-01-31T02:43:01Z"), Kind: rotation.RetireOld, Keys: []string{"old"}, Signer: "next"},
				{At: at(t, "2026-03-02T01:41:00Z"), Kind: rotation.PublishNext, Signer: "next"},
			}},
		{name: "switch written, signers reading it", now: "2026-01-31T01:40:59Z", stage: rotation.StageNextPublished, kind: rotation.Wait, at: "2026-01-31T01:41:00Z", why: rotation.WaitSchedule},
		{name: "next signs, old tokens alive", now: "2026-01-31T02:43:00Z", stage: rotation.StageNextSigns, kind: rotation.Wait, at: "2026-01-31T02:43:01Z", why: rotation.WaitTokens},
		{name: "old key retired", now: "2026-01-31T02:43:01Z", stage: rotation.StageNextSigns, kind: rotation.RetireOld, at: "2026-01-31T02:43:01Z",
			plan: []rotation.Step{
				{At: at(t, "2026-03-02T01:41:00Z"), Kind: rotation.PublishNext, Signer: "next"},
				{At: at(t, "2026-03-02T02:41:00Z"), Kind: rotation.SignNext, Signer: "next"},
				{At: at(t, "2026-03-02T03:44:01Z"), Kind: rotation.RetireOld, Keys: []string{"next"}},
			}},
		{name: "store reverted: withdrawn", now: "2026-01-31T02:50:00Z", revertTo: "old key retired", stage: rotation.StageSteady, kind: rotation.Repair, at: "2026-01-31T02:50:00Z", extra: []string{"old"}},
		{name: "steady again", now: "2026-01-31T03:30:00Z", stage: rotation.StageSteady, kind: rotation.Wait, at: "2026-03-02T01:41:00Z", why: rotation.WaitEvery},
	}
	stopped := map[string]time.Time{} // when each key stopped signing
	for _, st := range steps {
		now := at(t, st.now)
		if st.revertTo != "" {
			store = saved[st.revertTo]
		}
		saved[st.name] = store
		a, err := s.Next([][]string{store}, now, c)
		require.NoError(t, err, st.name)
		assert.Equal(t, st.stage, a.Stage, st.name)
		assert.Equal(t, st.kind, a.Kind, st.name)
		assert.Equal(t, at(t, st.at), a.At, st.name)
		assert.Equal(t, st.why, a.For, st.name)
		assert.Equal(t, st.missing, a.Missing, st.name)
		assert.Equal(t, st.extra, a.Extra, st.name)
		if st.plan != nil {
			assert.Equal(t, st.plan, a.Plan, st.name)
		}
		before := s.At(now).Signer
		s, err = s.Apply(a, "next")
		require.NoError(t, err, st.name)
		if a.Kind != rotation.Wait && a.Kind != rotation.SignNext {
			store = s.At(now).Listed() // the run publishes
		}
		if after := s.At(a.At).Signer; after != before {
			stopped[before] = a.At
		}
		for id, end := range stopped {
			if now.Before(end.Add(p.RetireWait())) {
				assert.Contains(t, store, id, "%s: tokens of %s may be live", st.name, id)
			}
		}
		assert.Contains(t, store, s.At(now).Signer, st.name)
	}
	assert.Equal(t, []string{"next"}, store)
}

// TestNextCARotation runs the pod-certificate CA rotation on Next: a
// schedule written at the start (the next CA published from the start,
// signing at SignsAt; the current CA retired the longest certificate
// lifetime and skew after), one copy (the ClusterTrustBundle), the zero
// cadence. A bundle found without the next CA before the switch is
// republished and the switch postponed (the retirement with it); a later
// switch recorded on the bundle is kept, an earlier one never moves it.
func TestNextCARotation(t *testing.T) {
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 5 * time.Minute}
	signsAt := t0.Add(2 * time.Hour)
	s, err := rotation.New(p, []rotation.Key{
		{ID: "ca1", Signs: start, Retired: signsAt.Add(p.RetireWait())},
		{ID: "ca2", Signs: signsAt},
	})
	require.NoError(t, err)

	// The start: the bundle holds the current CA alone; SignsAt is two
	// hours away, more than Propagation: publishing now is safe.
	a, err := s.Next([][]string{{"ca1"}}, t0, rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.Repair, a.Kind)
	assert.True(t, a.Restart)
	assert.Equal(t, signsAt, a.SignsAt, "far enough: the switch stays")
	bundle := s.At(t0).Listed()
	assert.Equal(t, []string{"ca1", "ca2"}, bundle)

	a, err = s.Next([][]string{bundle}, t0, rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.Wait, a.Kind)
	assert.Equal(t, signsAt, a.At, "until the switch the schedule writes")
	assert.Equal(t, rotation.WaitSchedule, a.For)

	// At the switch, another writer has reverted the bundle: the next CA
	// is published again and signs an hour later.
	a, err = s.Next([][]string{{"ca1"}}, signsAt.Add(-time.Nanosecond), rotation.Cadence{})
	require.NoError(t, err)
	require.Equal(t, rotation.Repair, a.Kind)
	require.True(t, a.Restart)
	postponed := signsAt.Add(-time.Nanosecond).Add(p.Propagation)
	assert.Equal(t, postponed, a.SignsAt)
	s, err = s.Apply(a, "")
	require.NoError(t, err)
	assert.Equal(t, "ca1", s.At(signsAt).Signer, "the current CA signs until the postponed switch")
	assert.Equal(t, "ca2", s.At(postponed).Signer)
	assert.Equal(t, []string{"ca1", "ca2"}, s.At(postponed.Add(p.RetireWait()-time.Nanosecond)).Listed(), "the retirement moved with the switch")
	assert.Equal(t, []string{"ca2"}, s.At(postponed.Add(p.RetireWait())).Listed())

	// A record of the switch: a later one is kept, an earlier one ignored.
	later, err := s.Postpone("ca2", postponed.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, "ca1", later.At(postponed).Signer)
	same, err := later.Postpone("ca2", signsAt)
	require.NoError(t, err)
	assert.Equal(t, later.Keys(), same.Keys(), "never earlier")

	// After the switch, then at the retirement: the bundle drops the
	// former CA.
	s = later
	switchAt := postponed.Add(time.Hour)
	a, err = s.Next([][]string{{"ca1", "ca2"}}, switchAt, rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.StageNextSigns, a.Stage)
	assert.Equal(t, rotation.Wait, a.Kind)
	assert.Equal(t, switchAt.Add(p.RetireWait()), a.At)
	a, err = s.Next([][]string{{"ca1", "ca2"}}, switchAt.Add(p.RetireWait()), rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.Repair, a.Kind)
	assert.Equal(t, []string{"ca1"}, a.Extra)
	assert.False(t, a.Restart)
	a, err = s.Next([][]string{{"ca2"}}, switchAt.Add(p.RetireWait()), rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.StageSteady, a.Stage)
	assert.Equal(t, rotation.Wait, a.Kind)
	assert.True(t, a.At.IsZero(), "the rotation is over")
}

// TestNextRepairs: what a copy lacks or holds beyond the schedule makes a
// Repair, reported per kind; a copy that cannot be read lacks every key.
func TestNextRepairs(t *testing.T) {
	s, err := rotation.New(policy, []rotation.Key{
		{ID: "a", Signs: start, Retired: t0.Add(wait)},
		{ID: "b", Published: t0.Add(-time.Hour), Signs: t0},
		{ID: "legacy", VerifyOnly: true, Unlisted: true},
		{ID: "gone", VerifyOnly: true, Retired: t0},
	})
	require.NoError(t, err)
	now := t0.Add(time.Hour)
	for _, tt := range []struct {
		name                    string
		copies                  [][]string
		missing, extra, unknown []string
	}{
		{name: "every copy holds the listed keys", copies: [][]string{{"a", "b"}, {"b", "a"}}},
		{name: "no copy", copies: nil},
		{name: "a copy lacks the signing key", copies: [][]string{{"a", "b"}, {"a"}}, missing: []string{"b"}},
		{name: "a copy that cannot be read", copies: [][]string{{"a", "b"}, nil}, missing: []string{"a", "b"}},
		{name: "a retired key", copies: [][]string{{"a", "b", "gone"}}, extra: []string{"gone"}},
		{name: "an unlisted key", copies: [][]string{{"legacy", "a", "b"}}, extra: []string{"legacy"}},
		{name: "a key the schedule never had", copies: [][]string{{"a", "b", "x"}, {"a", "b", "x", "y"}}, unknown: []string{"x", "y"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := s.Next(tt.copies, now, rotation.Cadence{})
			require.NoError(t, err)
			assert.Equal(t, tt.missing, a.Missing)
			assert.Equal(t, tt.extra, a.Extra)
			assert.Equal(t, tt.unknown, a.Unknown)
			want := rotation.Wait
			if len(tt.missing)+len(tt.extra)+len(tt.unknown) > 0 {
				want = rotation.Repair
			}
			assert.Equal(t, want, a.Kind)
			assert.Equal(t, rotation.StageNextSigns, a.Stage)
			assert.Equal(t, "b", a.Signer)
			assert.Equal(t, []string{"a"}, a.Old)
			assert.False(t, a.Restart)
			same, err := s.Apply(a, "")
			require.NoError(t, err)
			assert.Equal(t, s.Keys(), same.Keys(), "a repair changes no time")
		})
	}
}

// TestNextWrittenSwitch: a switch the schedule writes (a ring file
// rotated in advance) is waited for, not made; a copy that lacks the next
// key too near it makes the switch move (SignsAt), one far enough does
// not.
func TestNextWrittenSwitch(t *testing.T) {
	switchAt := t0.Add(24 * time.Hour)
	s, err := rotation.New(policy, []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: t0, Signs: switchAt}})
	require.NoError(t, err)
	c := rotation.Cadence{Every: 720 * time.Hour, Delay: time.Minute}
	a, err := s.Next([][]string{{"a", "b"}}, t0.Add(time.Hour), c)
	require.NoError(t, err)
	assert.Equal(t, rotation.Wait, a.Kind)
	assert.Equal(t, switchAt, a.At)
	assert.Equal(t, rotation.WaitSchedule, a.For)
	assert.Equal(t, []rotation.Step{
		{At: switchAt, Kind: rotation.SignNext, Keys: []string{"b"}, Signer: "a"},
		{At: switchAt.Add(wait), Kind: rotation.RetireOld, Keys: []string{"a"}, Signer: "b"},
		{At: switchAt.Add(720 * time.Hour), Kind: rotation.PublishNext, Signer: "b"},
	}, a.Plan, "no publish delay: the schedule writes the switch")

	for _, tt := range []struct {
		name    string
		now     time.Time
		signsAt time.Time
	}{
		{name: "missing a day before", now: switchAt.Add(-24 * time.Hour), signsAt: switchAt},
		{name: "missing exactly the propagation time before", now: switchAt.Add(-time.Hour), signsAt: switchAt},
		{name: "missing half an hour before", now: switchAt.Add(-30 * time.Minute), signsAt: switchAt.Add(30 * time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := s.Next([][]string{{"a"}}, tt.now, c)
			require.NoError(t, err)
			assert.Equal(t, rotation.Repair, a.Kind)
			assert.True(t, a.Restart)
			assert.Equal(t, tt.signsAt, a.SignsAt)
			after, err := s.Apply(a, "")
			require.NoError(t, err)
			i := slices.IndexFunc(after.Keys(), func(k rotation.Key) bool { return k.ID == "b" })
			assert.Equal(t, tt.now, after.Keys()[i].Published, "published again now")
			assert.Equal(t, tt.signsAt, after.Keys()[i].Signs)
		})
	}
}

// TestNextSignNextNotAtTheSwitchInstant: a next key published from the
// start may sign at once, but never at the instant the signer took over.
func TestNextSignNextNotAtTheSwitchInstant(t *testing.T) {
	s, err := rotation.New(policy, []rotation.Key{{ID: "a", Signs: t0}, {ID: "b"}})
	require.NoError(t, err)
	a, err := s.Next([][]string{{"a", "b"}}, t0, rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.SignNext, a.Kind)
	assert.Equal(t, t0.Add(time.Nanosecond), a.At)
	_, err = s.Apply(a, "")
	require.NoError(t, err)
}
