package x509sa

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ksa-go/ksa/jwks"
)

// FuzzQualifiedName holds the hand-written extension-key check to
// apimachinery's IsQualifiedName.
func FuzzQualifiedName(f *testing.F) {
	for _, s := range []string{
		"k", "example.com/team", "a.b-c_d", "-a", "a-", "a/b/c", "/a", "a/", "A/b",
		"example.com/" + strings.Repeat("n", 63), "example.com/" + strings.Repeat("n", 64),
		strings.Repeat("p", 253) + "/n", strings.Repeat("p", 254) + "/n", "system:x", "a..b", "a_b", "a.-b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(validation.IsQualifiedName(s)) == 0
		assert.Equal(t, want, isQualifiedName(s), "%q", s)
	})
}

func TestRequestedKeyUsageEncoding(t *testing.T) {
	// digital signature alone is the single bit 0: 03 02 07 80; with key
	// encipherment (bit 2): 03 02 05 a0 — the bytes crypto/x509 writes.
	exts, err := requestedExtensions(1, ClientAuth)
	assert.NoError(t, err)
	assert.Equal(t, []byte{0x03, 0x02, 0x07, 0x80}, exts[0].Value)
	exts, err = requestedExtensions(1|4, ClientAuth)
	assert.NoError(t, err)
	assert.Equal(t, []byte{0x03, 0x02, 0x05, 0xa0}, exts[0].Value)
}

func TestCheckPublicKeyOddities(t *testing.T) {
	tests := []struct {
		name string
		key  crypto.PublicKey
		want string
	}{
		{name: "nil", key: nil, want: "none"},
		{name: "nil RSA", key: (*rsa.PublicKey)(nil), want: "RSA (nil)"},
		{name: "RSA without modulus", key: &rsa.PublicKey{}, want: "RSA (nil)"},
		{name: "RSA 8193", key: &rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 8192), E: 65537}, want: "RSA 8193"},
		{name: "nil ECDSA", key: (*ecdsa.PublicKey)(nil), want: "ECDSA (nil)"},
		{name: "ECDSA without curve", key: &ecdsa.PublicKey{}, want: "ECDSA (nil)"},
		{name: "short Ed25519", key: ed25519.PublicKey{1, 2}, want: "Ed25519 (malformed)"},
		{name: "X25519", key: &ecdh.PublicKey{}, want: "*ecdh.PublicKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPublicKey(tt.key)
			assert.ErrorContains(t, err, "key "+tt.want+" is not supported")
			assert.ErrorIs(t, err, jwks.ErrUnsupportedKey)
		})
	}
	// 2^8191 + 1: an odd modulus of 8192 bits, the largest accepted.
	largest := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 8191), big.NewInt(1))
	assert.NoError(t, checkPublicKey(&rsa.PublicKey{N: largest, E: 65537}), "8192 bits")
	assert.Equal(t, x509.SHA512WithRSA, signatureAlgorithm(&rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 4095), E: 65537}))
}

func TestDefaultJitter(t *testing.T) {
	assert.Zero(t, defaultJitter(0))
	assert.Zero(t, defaultJitter(-time.Second))
	for range 100 {
		j := defaultJitter(time.Millisecond)
		assert.True(t, j >= 0 && j < time.Millisecond, "%v", j)
	}
}
