package publish_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
)

// testKey returns the public key of a new RSA 2048 or ECDSA P-256 key.
func testKey(t testing.TB, kind string) jwks.Key {
	var pub any
	if kind == "rsa" {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		pub = k.Public()
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		pub = k.Public()
	}
	key, err := jwks.NewKey(pub)
	require.NoError(t, err)
	return key
}
