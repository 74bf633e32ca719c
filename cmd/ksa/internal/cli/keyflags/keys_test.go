package keyflags

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyType(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ed, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		pub  any
		want string
	}{
		{name: "RSA", pub: &rk.PublicKey, want: "RSA 2048"},
		{name: "ECDSA", pub: &ec.PublicKey, want: "ECDSA P-384"},
		{name: "Ed25519", pub: ed, want: "Ed25519"},
		{name: "empty RSA", pub: &rsa.PublicKey{}, want: "RSA (empty)"},
		{name: "nil ECDSA", pub: (*ecdsa.PublicKey)(nil), want: "ECDSA (empty)"},
		{name: "nil", pub: nil, want: "none"},
		{name: "other", pub: "a string", want: "string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, KeyType(tc.pub))
		})
	}
}
