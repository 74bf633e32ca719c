package jws_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/jws"
)

// TestNames: every algorithm of the table, none that is not asymmetric,
// in a slice the caller may keep.
func TestNames(t *testing.T) {
	names := jws.Names()
	assert.Len(t, names, 11)
	for _, n := range names {
		assert.True(t, jws.Known(n), n)
	}
	for _, n := range []string{"none", "HS256", "RS1"} {
		assert.NotContains(t, names, n)
	}
	names[0] = "changed"
	assert.NotContains(t, jws.Names(), "changed")
}
