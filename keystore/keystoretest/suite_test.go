package keystoretest_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// memStore is an AWS KMS of keys in memory that keeps the key stores'
// contract: the smallest store Run passes.
type memStore struct {
	mu     sync.Mutex
	keys   map[string]crypto.Signer
	closed bool
}

func (m *memStore) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	r, err := keystore.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if r.Scheme() != keystore.SchemeAWSKMS {
		return nil, &keystore.StoreError{Ref: r.String(), What: "is not an AWS KMS key", Fix: "use an opener of its scheme", Kind: keystore.ErrUnsupportedStore}
	}
	m.mu.Lock()
	key, ok := m.keys[r.Attr("key-id")]
	closed := m.closed
	m.mu.Unlock()
	switch {
	case closed:
		return nil, &keystore.StoreError{Ref: r.String(), What: "cannot be opened", Fix: "open keys before Close", Kind: keystore.ErrKeyStore}
	case ctx.Err() != nil:
		return nil, &keystore.StoreError{Ref: r.String(), What: "cannot be opened", Fix: "retry", Kind: keystore.ErrKeyStore, Err: context.Cause(ctx)}
	case !ok:
		return nil, &keystore.StoreError{Ref: r.String(), What: "no such key", Fix: "check key-id", Kind: keystore.ErrKeyStore}
	}
	return memSigner{key}, nil
}

func (m *memStore) Create(_ context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	r, err := keystore.ParseNewKeyRef(ref)
	if err != nil {
		return keystore.Created{}, err
	}
	var key crypto.Signer
	switch {
	case spec.RSA && spec.Bits < jwks.MinRSABits:
		return keystore.Created{}, &keystore.StoreError{Ref: r.String(), What: "too small", Fix: "make 2048 bits or more", Kind: jwks.ErrUnsupportedKey}
	case spec.RSA:
		key, err = rsa.GenerateKey(rand.Reader, spec.Bits)
	case spec.Curve == nil:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		key, err = ecdsa.GenerateKey(spec.Curve, rand.Reader)
	}
	if err != nil {
		return keystore.Created{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", len(m.keys)+1)
	if m.keys == nil {
		m.keys = map[string]crypto.Signer{}
	}
	m.keys[id] = key
	return keystore.Created{Ref: "awskms:key-id=" + id, Public: key.Public()}, nil
}

func (m *memStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// memSigner signs unless its caller's context has ended.
type memSigner struct{ crypto.Signer }

func (s memSigner) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return s.Sign(rand, digest, opts)
}

// TestRun: a store that keeps the contract passes every check.
func TestRun(t *testing.T) {
	store := &memStore{}
	imported, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	require.NoError(t, err)
	store.keys = map[string]crypto.Signer{"1234abcd-12ab-34cd-56ef-1234567890ab": imported}
	keystoretest.Run(t, keystoretest.Config{
		Opener:  store,
		Keys:    []keystoretest.Key{{Ref: "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab", Public: imported.Public()}},
		NewKey:  func(keystore.KeySpec) string { return "awskms:name=sa" },
		Specs:   []keystore.KeySpec{{}, {Curve: elliptic.P384()}, {RSA: true, Bits: 2048}},
		Missing: "awskms:key-id=00000000-0000-4000-8000-000000000000",
	})
	require.True(t, store.closed, "Run closes the store last")
	require.Len(t, store.keys, 4)
}
