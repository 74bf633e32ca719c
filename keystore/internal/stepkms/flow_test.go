package stepkms

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
)

// TestOpen: the reference is parsed and its scheme checked before the
// store is asked, and the key is checked after.
func TestOpen(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	asked := 0
	open := func(context.Context, keystore.Ref) (crypto.Signer, error) { asked++; return key, nil }
	signer, err := Open(t.Context(), "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab", keystore.SchemeAWSKMS, open)
	require.NoError(t, err)
	assert.Same(t, key, signer)
	for _, tt := range []struct {
		ref, want string
		kind      error
	}{
		{ref: "pkcs11:token=ksa;id=01?pin-value=4321", kind: keystore.ErrInvalidRef},
		{ref: "sa.key", kind: keystore.ErrUnsupportedStore, want: "is a PEM key file, and this is the awskms store"},
		{ref: "azurekms:name=sa;vault=my-vault", kind: keystore.ErrUnsupportedStore, want: "names a key in azurekms, and this is the awskms store"},
	} {
		_, err := Open(t.Context(), tt.ref, keystore.SchemeAWSKMS, open)
		require.ErrorIs(t, err, tt.kind, tt.ref)
		assert.Contains(t, err.Error(), tt.want)
		assert.NotContains(t, err.Error(), "4321")
	}
	assert.Equal(t, 1, asked, "refused references never reach the store")
}

// TestCreate: a spec outside jwks' rules is refused before the store is
// asked; the zero spec is ECDSA P-256; what the store answers is checked.
func TestCreate(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	var got []keystore.KeySpec
	answer := keystore.Created{Ref: "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab", Public: key.Public()}
	create := func(_ context.Context, _ keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
		got = append(got, spec)
		return answer, nil
	}
	c, err := Create(t.Context(), "awskms:name=sa", keystore.SchemeAWSKMS, keystore.KeySpec{}, create)
	require.NoError(t, err)
	assert.Equal(t, answer, c)
	assert.Equal(t, []keystore.KeySpec{{Curve: elliptic.P256()}}, got)

	for _, spec := range []keystore.KeySpec{{RSA: true, Bits: 1024}, {RSA: true, Bits: 16384}, {Curve: elliptic.P224()}} {
		_, err := Create(t.Context(), "awskms:name=sa", keystore.SchemeAWSKMS, spec, create)
		storetest.StoreErr(t, err, jwks.ErrUnsupportedKey, "cannot be created as "+spec.String())
	}
	assert.Len(t, got, 1, "refused specs never reach the store")

	answer.Ref = "awskms:key-id=alias/sa"
	_, err = Create(t.Context(), "awskms:name=sa", keystore.SchemeAWSKMS, keystore.KeySpec{}, create)
	storetest.StoreErr(t, err, keystore.ErrKeyStore, "the key store named the new key in a way ksa cannot read")
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	require.NoError(t, err)
	answer = keystore.Created{Ref: "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab", Public: p224.Public()}
	_, err = Create(t.Context(), "awskms:name=sa", keystore.SchemeAWSKMS, keystore.KeySpec{}, create)
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
}

// closer counts its closes, and fails with err.
type closer struct {
	n   int
	err error
}

func (c *closer) Close() error { c.n++; return c.err }

// TestClients: one client per configuration, made once; after Close,
// none.
func TestClients(t *testing.T) {
	var cs Clients[*closer]
	made := 0
	open := func() (*closer, error) { made++; return &closer{}, nil }
	a, err := cs.Get("a", open)
	require.NoError(t, err)
	again, err := cs.Get("a", open)
	require.NoError(t, err)
	assert.Same(t, a, again)
	_, err = cs.Get("b", func() (*closer, error) { return nil, io.ErrUnexpectedEOF })
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	b, err := cs.Get("b", open)
	require.NoError(t, err)
	assert.Equal(t, 2, made)
	b.err = errors.New("close failed")
	require.ErrorIs(t, cs.Close(), b.err)
	assert.Equal(t, 1, a.n)
	assert.True(t, cs.Closed())
	_, err = cs.Get("a", open)
	require.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, 2, made)
}
