package ownkey_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/ownkey"
	"github.com/ksa-go/ksa/internal/testkeys"
)

// opaque is a signer ownkey does not know.
type opaque struct{ crypto.Signer }

func TestCopy(t *testing.T) {
	p256 := testkeys.Generated("p256").(*ecdsa.PrivateKey)
	rsaKey := testkeys.Generated("rsa2048").(*rsa.PrivateKey)
	ed := testkeys.Generated("ed25519").(ed25519.PrivateKey)
	mismatched, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	mismatched.PublicKey = p256.PublicKey
	brokenRSA := *rsaKey
	brokenRSA.D = new(big.Int).Add(rsaKey.D, big.NewInt(2))
	tests := []struct {
		name      string
		key       crypto.Signer
		wantKnown bool
		wantErr   bool
	}{
		{name: "ECDSA", key: p256, wantKnown: true},
		{name: "RSA", key: rsaKey, wantKnown: true},
		{name: "Ed25519", key: ed, wantKnown: true},
		{name: "another signer", key: opaque{p256}},
		{name: "ECDSA whose public half is another key's", key: mismatched, wantKnown: true},
		{name: "RSA with a wrong private exponent", key: &brokenRSA, wantErr: true},
		{name: "Ed25519 of the wrong size", key: ed[:10], wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, known, err := ownkey.Copy(tt.key)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantKnown, known)
			if !known {
				assert.Equal(t, tt.key, c, "returned as it is")
				return
			}
			if _, isEd := c.(ed25519.PrivateKey); !isEd {
				assert.NotSame(t, tt.key, c, "a copy")
			}
			// The copy's public half is derived from its private half: for
			// the mismatched key it is not the public half given.
			sig, err := c.Sign(rand.Reader, make([]byte, 32), signOpts(c))
			require.NoError(t, err)
			switch pub := c.Public().(type) {
			case *ecdsa.PublicKey:
				assert.True(t, ecdsa.VerifyASN1(pub, make([]byte, 32), sig))
				assert.Equal(t, tt.name != "ECDSA whose public half is another key's", pub.Equal(tt.key.Public()))
			case *rsa.PublicKey:
				assert.NoError(t, rsa.VerifyPKCS1v15(pub, crypto.SHA256, make([]byte, 32), sig))
			case ed25519.PublicKey:
				assert.True(t, ed25519.Verify(pub, make([]byte, 32), sig))
			}
		})
	}
}

func signOpts(s crypto.Signer) crypto.SignerOpts {
	if _, ok := s.Public().(ed25519.PublicKey); ok {
		return crypto.Hash(0)
	}
	return crypto.SHA256
}
