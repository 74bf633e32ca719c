package base

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    int64
		want string
	}{
		{name: "now", d: 0, want: "now"},
		{name: "future", d: 3600 + 61, want: "in 1h1m1s"},
		{name: "past days", d: -(2*86400 + 60), want: "2d1m ago"},
		{name: "seconds", d: 5, want: "in 5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, RelTime(unix(tc.d), unix(0)))
		})
	}
}

type unix int64

func (u unix) Unix() int64 { return int64(u) }
