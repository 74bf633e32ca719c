// Package storetest holds the assertions the key-store packages' tests
// share (tests only).
package storetest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

// Verify checks that signer signs what its public key verifies, as RS256
// or ES256/384/512 sign: the hash of the curve's size.
func Verify(t testing.TB, signer crypto.Signer) {
	t.Helper()
	msg := []byte("header.claims")
	h := crypto.SHA256
	if k, ok := signer.Public().(*ecdsa.PublicKey); ok && k.Curve == elliptic.P384() {
		h = crypto.SHA384
	} else if ok && k.Curve == elliptic.P521() {
		h = crypto.SHA512
	}
	hh := h.New()
	hh.Write(msg)
	digest := hh.Sum(nil)
	sig, err := signer.Sign(rand.Reader, digest, h)
	require.NoError(t, err)
	switch k := signer.Public().(type) {
	case *rsa.PublicKey:
		require.NoError(t, rsa.VerifyPKCS1v15(k, h, digest, sig))
	case *ecdsa.PublicKey:
		require.True(t, ecdsa.VerifyASN1(k, digest, sig), "ECDSA signature verifies")
	default:
		t.Fatalf("public key %T", k)
	}
}

// StoreErr holds err to a *keystore.StoreError of kind whose text has
// want and none of the secrets, naming a fix.
func StoreErr(t testing.TB, err error, kind error, want string, secrets ...string) *keystore.StoreError {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var e *keystore.StoreError
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Contains(t, err.Error(), want)
	assert.NotEmpty(t, e.Fix, "names the fix")
	assert.NotContains(t, err.Error(), "\n")
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s)
	}
	return e
}
