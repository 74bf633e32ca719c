package stepkms

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
)

// fakeSigner signs with key once release is closed, or fails with err;
// each call is reported on entered and, when it ends, on left.
type fakeSigner struct {
	key           crypto.Signer
	release       chan struct{}
	err           error
	entered, left chan struct{}
}

func (f *fakeSigner) Public() crypto.PublicKey { return f.key.Public() }

func (f *fakeSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if f.entered != nil {
		f.entered <- struct{}{}
		defer func() { f.left <- struct{}{} }()
	}
	if f.release != nil {
		<-f.release
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.key.Sign(rand, digest, opts)
}

// mismatched signs with Signer but claims pub.
type mismatched struct {
	crypto.Signer
	pub crypto.PublicKey
}

func (m mismatched) Public() crypto.PublicKey { return m.pub }

// TestCheckKey: a key jwks refuses, or whose signature does not verify
// with its public key, is refused when opened.
func TestCheckKey(t *testing.T) {
	ref, err := keystore.ParseRef("awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	require.NoError(t, err)
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	require.NoError(t, err)
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	require.NoError(t, err)
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tests := []struct {
		name   string
		signer crypto.Signer
		kind   error
		want   string
	}{
		{name: "ECDSA P-256", signer: p256},
		{name: "ECDSA P-521", signer: p521},
		{name: "RSA 2048", signer: rsa2048},
		{name: "P-224", signer: p224, kind: jwks.ErrUnsupportedKey, want: "holds a key ksa cannot use"},
		{name: "signs with another key", signer: mismatched{Signer: other, pub: &p256.PublicKey}, kind: keystore.ErrKeyStore, want: "does not verify"},
		{name: "probe fails", signer: &fakeSigner{key: p256, err: errors.New("AccessDeniedException")},
			kind: keystore.ErrKeyStore, want: "the probe signature failed: AccessDeniedException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey(t.Context(), ref, tt.signer)
			if tt.kind == nil {
				require.NoError(t, err)
				return
			}
			storetest.StoreErr(t, err, tt.kind, tt.want)
		})
	}
}
