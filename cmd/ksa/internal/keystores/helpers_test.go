package keystores

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

// storeErr holds err to a *keystore.StoreError of kind whose text has
// want, naming a fix.
func storeErr(t *testing.T, err error, kind error, want string) *keystore.StoreError {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var e *keystore.StoreError
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Contains(t, err.Error(), want)
	assert.NotEmpty(t, e.Fix, "names the fix")
	return e
}
