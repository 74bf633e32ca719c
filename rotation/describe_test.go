package rotation_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/rotation"
)

func TestDescribe(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		plan []rotation.Step
		want []string
	}{
		{name: "empty", plan: nil, want: []string{}},
		{
			name: "from steady",
			plan: []rotation.Step{
				{At: t0, Kind: rotation.PublishNext, Signer: "k1"},
				{At: t0, Kind: rotation.SignNext, Signer: "k1"},
				{At: t0, Kind: rotation.RetireOld, Keys: []string{"k1"}},
			},
			want: []string{
				"create the next key and publish it beside kid k1",
				"the next key signs (kid k1 stays published)",
				"retire kid k1: every token it signed has expired",
			},
		},
		{
			name: "from next published",
			plan: []rotation.Step{
				{At: t0, Kind: rotation.SignNext, Keys: []string{"k2"}, Signer: "k1"},
				{At: t0, Kind: rotation.RetireOld, Keys: []string{"k1"}, Signer: "k2"},
				{At: t0, Kind: rotation.PublishNext, Signer: "k2"},
				{At: t0, Kind: rotation.PublishNext},
			},
			want: []string{
				"kid k2 signs (kid k1 stays published)",
				"retire kid k1: every token it signed has expired",
				"create the key after kid k2 and publish it",
				"create the key after the next key and publish it",
			},
		},
		{
			name: "retiring first, two old keys",
			plan: []rotation.Step{{At: t0, Kind: rotation.RetireOld, Keys: []string{"k1", "k0"}, Signer: "k2"}},
			want: []string{"retire kid k1, kid k0: every token signed before kid k2 signs has expired"},
		},
		{
			name: "a kind no plan holds",
			plan: []rotation.Step{{At: t0, Kind: rotation.Repair}},
			want: []string{"repair"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, rotation.Describe(tt.plan))
		})
	}
}

// The plan of a rotation in steady state, worded for its operator.
func ExampleDescribe() {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: time.Hour, Skew: 2 * time.Minute}
	c := rotation.Cadence{Every: 30 * 24 * time.Hour, Delay: time.Minute}
	s, err := rotation.New(p, []rotation.Key{{ID: "k1", Published: now.Add(-time.Hour), Signs: now.Add(-time.Hour)}})
	if err != nil {
		panic(err)
	}
	a, err := s.Next([][]string{{"k1"}}, now, c)
	if err != nil {
		panic(err)
	}
	for i, line := range rotation.Describe(a.Plan) {
		fmt.Printf("%s: %s\n", a.Plan[i].At.Format(time.DateTime), line)
	}
	// Output:
	// 2027-03-30 23:00:00: create the next key and publish it beside kid k1
	// 2027-03-31 00:00:00: the next key signs (kid k1 stays published)
	// 2027-03-31 01:03:00: retire kid k1: every token it signed has expired
}

func TestScheduleKey(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: time.Hour, Skew: time.Minute}
	s, err := rotation.New(p, []rotation.Key{{ID: "k1", Signs: t0}, {ID: "k2", Published: t0.Add(time.Hour)}})
	require.NoError(t, err)
	tests := []struct {
		id     string
		want   rotation.Key
		wantOK bool
	}{
		{id: "k1", want: rotation.Key{ID: "k1", Signs: t0}, wantOK: true},
		{id: "k2", want: rotation.Key{ID: "k2", Published: t0.Add(time.Hour)}, wantOK: true},
		{id: "k3"},
		{id: ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := s.Key(tt.id)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
