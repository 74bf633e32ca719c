package keystore_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

// fakeStore opens and creates every reference with key, recording them,
// and counts its closes.
type fakeStore struct {
	key    crypto.Signer
	opened []string
	closes int
	err    error
}

func (f *fakeStore) Open(_ context.Context, ref string) (crypto.Signer, error) {
	f.opened = append(f.opened, ref)
	return f.key, nil
}

func (f *fakeStore) Create(_ context.Context, ref string, _ keystore.KeySpec) (keystore.Created, error) {
	f.opened = append(f.opened, "create "+ref)
	return keystore.Created{Ref: ref, Public: f.key.Public()}, nil
}

func (f *fakeStore) Close() error { f.closes++; return f.err }

// TestOpeners: each reference goes to the opener of its scheme, a file
// is read by the Openers themselves, and a scheme without an opener is
// refused naming the package that opens it.
func TestOpeners(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "sa.key")
	require.NoError(t, os.WriteFile(path, pkcs8PEM(t, key), 0o600))
	hsm, aws := &fakeStore{key: key}, &fakeStore{key: key, err: errors.New("close failed")}
	o := keystore.Openers{PKCS11: hsm, AWSKMS: aws, AzureKMS: keystore.Files{}}
	var _ keystore.Opener = o
	var _ keystore.Creator = o
	var _ io.Closer = o

	signer, err := o.Open(t.Context(), path)
	require.NoError(t, err)
	assert.True(t, key.PublicKey.Equal(signer.Public()))
	_, err = o.Open(t.Context(), filepath.Join(t.TempDir(), "missing.key"))
	require.ErrorIs(t, err, keystore.ErrKeyFile)

	const hsmRef = "pkcs11:token=ksa;id=01;object=sa?pin-source=/p"
	const awsRef = "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab"
	_, err = o.Open(t.Context(), hsmRef)
	require.NoError(t, err)
	_, err = o.Open(t.Context(), awsRef)
	require.NoError(t, err)
	c, err := o.Create(t.Context(), hsmRef, keystore.KeySpec{})
	require.NoError(t, err)
	assert.Equal(t, hsmRef, c.Ref)
	assert.Equal(t, []string{hsmRef, "create " + hsmRef}, hsm.opened)
	assert.Equal(t, []string{awsRef}, aws.opened)

	tests := []struct {
		name, ref string
		create    bool
		kind      error
		want      string
	}{
		{name: "no cloudkms opener", ref: "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1", kind: keystore.ErrUnsupportedStore,
			want: "this program opens no cloudkms keys; give it an opener of them (package github.com/ksa-go/ksa/keystore/cloudkms)"},
		{name: "refused reference", ref: "pkcs11:token=ksa;id=01?pin-value=4321", kind: keystore.ErrInvalidRef},
		{name: "create a file", ref: path, create: true, kind: keystore.ErrUnsupportedStore, want: "is a file; write the key file yourself"},
		{name: "create with an opener that makes no keys", ref: "azurekms:name=sa;vault=my-vault", create: true, kind: keystore.ErrUnsupportedStore,
			want: "cannot be created: this program's azurekms opener makes no keys"},
		{name: "create a refused reference", ref: "awskms:key-id=alias/sa", create: true, kind: keystore.ErrInvalidRef},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.create {
				_, err = o.Create(t.Context(), tt.ref, keystore.KeySpec{})
			} else {
				_, err = o.Open(t.Context(), tt.ref)
			}
			require.ErrorIs(t, err, tt.kind)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "4321")
		})
	}
	assert.Len(t, hsm.opened, 2, "refused references reach no store")

	require.ErrorIs(t, o.Close(), aws.err)
	assert.Equal(t, 1, hsm.closes)
	assert.Equal(t, 1, aws.closes)
	require.NoError(t, keystore.Openers{}.Close(), "the zero Openers closes nothing")
}

// TestStoreError: one line, the kind and the store's error matched, the
// package prefix once.
func TestStoreError(t *testing.T) {
	cause := errors.New("CKR_PIN_INCORRECT\nfrom the token")
	e := &keystore.StoreError{Ref: "pkcs11:token=ksa;id=01?pin-source=/p", What: "the token refused the PIN", Detail: "CKR_PIN_INCORRECT\nx",
		Fix: "check the PIN pin-source gives", Kind: keystore.ErrLoginRefused, Err: cause}
	assert.Equal(t, "keystore: pkcs11:token=ksa;id=01?pin-source=/p: the token refused the PIN: CKR_PIN_INCORRECT x; check the PIN pin-source gives", e.Error())
	require.ErrorIs(t, e, keystore.ErrLoginRefused)
	require.ErrorIs(t, e, keystore.ErrKeyStore, "a login refused is a key store's failure")
	require.ErrorIs(t, e, cause)
	assert.NotErrorIs(t, e, keystore.ErrUnsupportedStore)
	bare := &keystore.StoreError{Ref: "r", What: "failed"}
	assert.Equal(t, "keystore: r: failed", bare.Error())
	assert.Empty(t, bare.Unwrap())
	assert.NotErrorIs(t, keystore.ErrKeyStore, keystore.ErrLoginRefused)
}

func TestKeySpecString(t *testing.T) {
	for spec, want := range map[keystore.KeySpec]string{
		{}:                       "ECDSA P-256",
		{Curve: elliptic.P384()}: "ECDSA P-384",
		{RSA: true, Bits: 3072}:  "RSA 3072",
		{Curve: unnamedCurve{}}:  "ECDSA (unnamed curve)",
		{Curve: elliptic.P521()}: "ECDSA P-521",
		{RSA: true}:              "RSA 0",
	} {
		assert.Equal(t, want, spec.String())
	}
}

// unnamedCurve is a curve without parameters.
type unnamedCurve struct{ elliptic.Curve }

func (unnamedCurve) Params() *elliptic.CurveParams { return nil }

// TestMaxRemoteCalls holds the documented default.
func TestMaxRemoteCalls(t *testing.T) {
	assert.Equal(t, 64, keystore.MaxRemoteCalls)
}
