package oidc_test

import (
	"crypto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

// mint mints a token with srv's current key, failing the test on error.
func mint(t testing.TB, srv *oidctest.Server, req tokens.Request) string {
	t.Helper()
	raw, err := srv.Mint(t.Context(), req)
	require.NoError(t, err)
	return raw
}

// rotate rotates srv's signing key, failing the test on error.
func rotate(t testing.TB, srv *oidctest.Server, signer crypto.Signer, keepOld bool) jwks.Key {
	t.Helper()
	key, err := srv.Rotate(signer, keepOld)
	require.NoError(t, err)
	return key
}

// requireIssuerRefused holds err to the refusal of an issuer setting: a
// *ksa.ConfigError naming a field of IssuerConfig.
func requireIssuerRefused(t *testing.T, err error) {
	t.Helper()
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.HasPrefix(ce.Field, "oidc.IssuerConfig."), "an issuer setting: %s", ce.Field)
}
