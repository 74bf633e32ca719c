package base

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadInputLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{name: "at the limit", size: 10},
		{name: "one over", size: 11, wantErr: true},
		{name: "empty", size: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadInput("-", strings.NewReader(strings.Repeat("a", tc.size)), 10)
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrTooLarge)
				return
			}
			require.NoError(t, err)
			assert.Len(t, data, tc.size)
		})
	}
	_, err := ReadInput("-", nil, 10)
	assert.Error(t, err)
}
