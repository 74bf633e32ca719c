package entratest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation/entratest"
)

// TestNewServerConfig: a Config without TenantID is refused with the
// module's configuration error, naming the field as it is spelt.
func TestNewServerConfig(t *testing.T) {
	_, err := entratest.NewServer(entratest.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	var cerr *ksa.ConfigError
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, "entratest.Config.TenantID", cerr.Field)

	srv, err := entratest.NewServer(entratest.Config{TenantID: "t"})
	require.NoError(t, err)
	defer srv.Close()
	assert.Contains(t, srv.URL(), "https://127.0.0.1:")
}
