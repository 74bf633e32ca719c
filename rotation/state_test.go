package rotation_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/rotation"
)

// TestAt: a schedule's state changes at the written instants, not a
// nanosecond before: the keys published, their roles and since when, the
// signer, the data timestamp and the next change.
func TestAt(t *testing.T) {
	switchAt, retireAt := t0.Add(time.Hour), t0.Add(time.Hour+wait)
	s, err := rotation.New(policy, []rotation.Key{
		{ID: "old", Signs: start, Retired: retireAt},
		{ID: "next", Published: t0, Signs: switchAt},
		{ID: "legacy", VerifyOnly: true, Unlisted: true},
	})
	require.NoError(t, err)
	type key struct {
		id    string
		role  rotation.Role
		since time.Time
	}
	for _, tt := range []struct {
		name   string
		at     time.Time
		keys   []key
		signer string
		stamp  time.Time
		next   time.Time
	}{
		{name: "before anything", at: start.Add(-time.Nanosecond), keys: []key{{"old", rotation.RoleStaged, time.Time{}}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			stamp: start.UTC(), next: start},
		{name: "the old key signs from the start", at: start, keys: []key{{"old", rotation.RoleSigning, start}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "old", stamp: start.UTC(), next: t0},
		{name: "just before the next key is published", at: t0.Add(-time.Nanosecond), keys: []key{{"old", rotation.RoleSigning, start}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "old", stamp: start.UTC(), next: t0},
		{name: "the next key published", at: t0, keys: []key{{"old", rotation.RoleSigning, start}, {"next", rotation.RoleStaged, t0}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "old", stamp: t0, next: switchAt},
		{name: "just before the switch", at: switchAt.Add(-time.Nanosecond), keys: []key{{"old", rotation.RoleSigning, start}, {"next", rotation.RoleStaged, t0}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "old", stamp: t0, next: switchAt},
		{name: "the switch", at: switchAt, keys: []key{{"old", rotation.RolePrevious, switchAt}, {"next", rotation.RoleSigning, switchAt}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "next", stamp: t0, next: retireAt},
		{name: "just before the retirement", at: retireAt.Add(-time.Nanosecond), keys: []key{{"old", rotation.RolePrevious, switchAt}, {"next", rotation.RoleSigning, switchAt}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "next", stamp: t0, next: retireAt},
		{name: "the old key retired", at: retireAt, keys: []key{{"next", rotation.RoleSigning, switchAt}, {"legacy", rotation.RoleVerifyOnly, time.Time{}}},
			signer: "next", stamp: retireAt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := s.At(tt.at)
			var keys []key
			for _, k := range st.Keys {
				keys = append(keys, key{k.ID, k.Role, k.Since})
			}
			assert.Equal(t, tt.keys, keys)
			assert.Equal(t, tt.signer, st.Signer)
			assert.Equal(t, tt.stamp, st.DataTimestamp)
			assert.Equal(t, tt.next, st.Next)
			var listed []string
			for _, k := range tt.keys {
				if k.id != "legacy" {
					listed = append(listed, k.id)
				}
			}
			assert.Equal(t, listed, st.Listed(), "the unlisted key is left out")
		})
	}
	assert.Equal(t, t0, s.At(switchAt.Add(-time.Nanosecond)).Changed, "the latest time at or before the instant")
	assert.Equal(t, switchAt, s.At(switchAt.Add(time.Minute)).Changed)
}

// TestDefaults: the documented meaning of zero times and zero values.
func TestDefaults(t *testing.T) {
	s, err := rotation.New(policy, []rotation.Key{{ID: "a", Signs: t0}})
	require.NoError(t, err)
	st := s.At(t0.Add(100 * 365 * 24 * time.Hour))
	require.Len(t, st.Keys, 1, "zero Retired: never retired")
	assert.True(t, st.Keys[0].Published.IsZero())
	assert.Equal(t, rotation.RoleStaged, s.At(t0.Add(-time.Hour)).Keys[0].Role, "zero Published: published from the start, before it signs")
	assert.Equal(t, time.Unix(0, 0).UTC(), st.DataTimestamp, "no Published or Retired time: the Unix epoch")
	assert.True(t, st.Next.IsZero(), "nothing comes")

	staged, err := rotation.New(policy, []rotation.Key{{ID: "a", Signs: start}, {ID: "b", Published: t0}})
	require.NoError(t, err)
	assert.Equal(t, rotation.RoleStaged, staged.At(t0.Add(1000 * time.Hour)).Keys[1].Role, "zero Signs: it does not sign")

	// The zero Cadence follows the schedule alone: no key is made.
	a, err := s.Next([][]string{{"a"}}, t0.Add(1000*24*time.Hour), rotation.Cadence{})
	require.NoError(t, err)
	assert.Equal(t, rotation.Wait, a.Kind)
	assert.True(t, a.At.IsZero(), "nothing to wait for")
	assert.Empty(t, a.Plan)

	assert.Equal(t, policy.MaxLifetime+policy.Skew, policy.RetireWait())
	assert.Equal(t, 64, rotation.MaxKeys)
	assert.Equal(t, time.Duration(1<<32)*time.Second, rotation.MaxDuration)
	assert.Equal(t, []rotation.Key{{ID: "a", Signs: t0}}, s.Keys())
	assert.Equal(t, policy, s.Policy())
	for v, want := range map[interface{ String() string }]string{
		rotation.RoleStaged: "staged", rotation.RoleSigning: "signing", rotation.RolePrevious: "previous", rotation.RoleVerifyOnly: "verify-only", rotation.Role(9): "Role(9)",
		rotation.Wait: "wait", rotation.Repair: "repair", rotation.PublishNext: "publish-next", rotation.SignNext: "sign-next", rotation.RetireOld: "retire-old", rotation.Kind(9): "Kind(9)",
		rotation.StageSteady: "steady", rotation.StageNextPublished: "next-published", rotation.StageNextSigns: "next-signs", rotation.Stage(9): "Stage(9)",
		rotation.WaitEvery: "every", rotation.WaitPropagation: "propagation", rotation.WaitTokens: "tokens", rotation.WaitSchedule: "schedule", rotation.Reason(9): "Reason(9)",
	} {
		assert.Equal(t, want, v.String())
	}
}

// TestKeysAreCopies: a schedule keeps its own keys; what New was given and
// what Keys returns are the caller's.
func TestKeysAreCopies(t *testing.T) {
	keys := []rotation.Key{{ID: "a", Signs: start}}
	s, err := rotation.New(policy, keys)
	require.NoError(t, err)
	keys[0].ID = "changed"
	s.Keys()[0].ID = "changed too"
	assert.Equal(t, "a", s.At(t0).Signer)
}
