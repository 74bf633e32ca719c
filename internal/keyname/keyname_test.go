package keyname_test

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/keyname"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  crypto.PublicKey
		want string
	}{
		{name: "nil", key: nil, want: "none"},
		{name: "RSA 2048", key: &rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 2047), E: 65537}, want: "RSA 2048"},
		{name: "nil RSA", key: (*rsa.PublicKey)(nil), want: "RSA (nil)"},
		{name: "RSA without modulus", key: &rsa.PublicKey{}, want: "RSA (nil)"},
		{name: "ECDSA P-256", key: &ecdsa.PublicKey{Curve: elliptic.P256()}, want: "ECDSA P-256"},
		{name: "nil ECDSA", key: (*ecdsa.PublicKey)(nil), want: "ECDSA (nil)"},
		{name: "ECDSA without curve", key: &ecdsa.PublicKey{}, want: "ECDSA (nil)"},
		{name: "Ed25519", key: make(ed25519.PublicKey, ed25519.PublicKeySize), want: "Ed25519"},
		{name: "short Ed25519", key: ed25519.PublicKey{1, 2}, want: "Ed25519 (malformed)"},
		{name: "X25519", key: &ecdh.PublicKey{}, want: "*ecdh.PublicKey"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keyname.Of(tt.key))
		})
	}
}
