package oidc_test

import (
	"crypto"
	"testing"

	"github.com/stretchr/testify/require"

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
