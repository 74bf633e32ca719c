package podcertctl

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// garbled signs with its key, then flips a bit of the signature, as a
// broken key store might answer.
type garbled struct{ crypto.Signer }

func (g garbled) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := g.Signer.Sign(r, digest, opts)
	if err == nil {
		sig[len(sig)-1] ^= 1
	}
	return sig, err
}

// ecdhOnly is a crypto.Signer whose public key no CA certificate carries.
type ecdhOnly struct{ crypto.Signer }

func (e ecdhOnly) Public() crypto.PublicKey {
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	return k.PublicKey()
}

func TestProbeSignature(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		key     crypto.Signer
		wantErr string
	}{
		{name: "ECDSA", key: ec},
		{name: "RSA", key: rsaKey},
		{name: "Ed25519", key: ed},
		{name: "an ECDSA signature that does not verify", key: garbled{ec}, wantErr: "the probe signature does not verify"},
		{name: "an RSA signature that does not verify", key: garbled{rsaKey}, wantErr: "the probe signature does not verify"},
		{name: "an Ed25519 signature that does not verify", key: garbled{ed}, wantErr: "the probe signature does not verify"},
		{name: "a key of no signature algorithm", key: ecdhOnly{ec}, wantErr: "cannot be probed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := probeSignature(tc.key)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}
