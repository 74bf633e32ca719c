package keystores

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// verify checks that signer signs what its public key verifies, as RS256
// or ES256/384/512 sign: the hash of the curve's size.
func verify(t *testing.T, signer crypto.Signer) {
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

// storeErr holds err to an *Error of kind whose text has want and none
// of the secrets.
func storeErr(t *testing.T, err error, kind error, want string, secrets ...string) *Error {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var e *Error
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Contains(t, err.Error(), want)
	assert.NotEmpty(t, e.Fix, "names the fix")
	assert.NotContains(t, err.Error(), "\n")
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s)
	}
	return e
}

func TestOpenFile(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "sa.key")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	var s Stores
	var opener keystore.Opener = &s
	signer, err := opener.Open(t.Context(), path)
	require.NoError(t, err)
	assert.True(t, key.PublicKey.Equal(signer.Public()))
	verify(t, signer)

	_, err = s.Open(t.Context(), filepath.Join(t.TempDir(), "missing.key"))
	require.ErrorIs(t, err, keystore.ErrKeyFile)
	_, err = s.Create(t.Context(), path, KeySpec{Curve: elliptic.P256()})
	storeErr(t, err, keystore.ErrUnsupportedStore, "is a file")
}

func TestOpenRefusedReference(t *testing.T) {
	var s Stores
	for _, ref := range []string{"pkcs11:token=ksa;id=01?pin-value=4321", "awskms:key-id=alias/sa", "pkcs12:x"} {
		_, err := s.Open(t.Context(), ref)
		require.ErrorIs(t, err, keystore.ErrInvalidRef, ref)
		assert.NotContains(t, err.Error(), "4321")
		_, err = s.Create(t.Context(), ref, KeySpec{Curve: elliptic.P256()})
		require.ErrorIs(t, err, keystore.ErrInvalidRef, ref)
	}
}

func TestOpenAfterClose(t *testing.T) {
	var s Stores
	require.NoError(t, s.Close())
	_, err := s.Open(t.Context(), "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	e := storeErr(t, err, keystore.ErrKeyStore, "cannot be opened")
	require.ErrorIs(t, e, errClosed)
}

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
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tests := []struct {
		name   string
		signer crypto.Signer
		kind   error
		want   string
	}{
		{name: "ECDSA P-256", signer: p256},
		{name: "RSA 2048", signer: rsa2048},
		{name: "P-224", signer: p224, kind: jwks.ErrUnsupportedKey, want: "holds a key ksa cannot use"},
		{name: "signs with another key", signer: mismatched{Signer: other, pub: &p256.PublicKey}, kind: keystore.ErrKeyStore, want: "does not verify"},
		{name: "probe fails", signer: &fakeSigner{key: p256, err: errors.New("AccessDeniedException")},
			kind: keystore.ErrKeyStore, want: "the probe signature failed: AccessDeniedException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKey(t.Context(), ref, tt.signer)
			if tt.kind == nil {
				require.NoError(t, err)
				return
			}
			storeErr(t, err, tt.kind, tt.want)
		})
	}
}

// mismatched signs with Signer but claims pub.
type mismatched struct {
	crypto.Signer
	pub crypto.PublicKey
}

func (m mismatched) Public() crypto.PublicKey { return m.pub }
