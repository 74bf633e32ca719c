package stepkms

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
)

// TestRemoteSignerHonoursContext: a signature of a remote key returns when
// the caller's context ends, while the store's call goes on; calls in
// flight are bounded by keystore.MaxRemoteCalls, and a call waiting for a slot
// gives up with its context too.
func TestRemoteSignerHonoursContext(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ref, err := keystore.ParseRef("awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	require.NoError(t, err)
	inner := &fakeSigner{key: key, release: make(chan struct{}),
		entered: make(chan struct{}, keystore.MaxRemoteCalls+1), left: make(chan struct{}, keystore.MaxRemoteCalls+1)}
	s := NewRemoteSigner(ref, inner, classifyTest, 0)
	digest := sha256.Sum256([]byte("x"))

	errGone := errors.New("kube-apiserver gave up")
	ctx, cancel := context.WithCancelCause(t.Context())
	results := make(chan error, keystore.MaxRemoteCalls)
	for range keystore.MaxRemoteCalls {
		go func() {
			_, err := s.SignContext(ctx, rand.Reader, digest[:], crypto.SHA256)
			results <- err
		}()
	}
	for range keystore.MaxRemoteCalls {
		<-inner.entered
	}
	cancel(errGone)
	for range keystore.MaxRemoteCalls {
		err := <-results
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "signing failed")
		require.ErrorIs(t, err, errGone)
		require.ErrorIs(t, err, context.Canceled)
	}

	// Every slot is still taken by a call the store has not answered: a
	// new signature waits for one, and gives up with its own context.
	ctx2, cancel2 := context.WithCancelCause(t.Context())
	waited := make(chan error, 1)
	go func() {
		_, err := s.SignContext(ctx2, rand.Reader, digest[:], crypto.SHA256)
		waited <- err
	}()
	cancel2(errGone)
	require.ErrorIs(t, <-waited, errGone)
	assert.Empty(t, inner.entered, "the waiting signature never reached the store")

	// The store answers: the slots free, and signatures go through.
	close(inner.release)
	for range keystore.MaxRemoteCalls {
		<-inner.left
	}
	inner.entered, inner.left = nil, nil
	sig, err := s.SignContext(t.Context(), rand.Reader, digest[:], crypto.SHA256)
	require.NoError(t, err)
	assert.True(t, ecdsa.VerifyASN1(&key.PublicKey, digest[:], sig))
	assert.Same(t, s.Public(), s.pub, "the public key read once")

	inner.err = errors.New("ThrottlingException")
	_, err = s.Sign(rand.Reader, digest[:], crypto.SHA256)
	require.ErrorIs(t, err, inner.err)
	storetest.StoreErr(t, err, keystore.ErrKeyStore, "ThrottlingException")
}

// classifyTest is a remote store's error classification for tests.
func classifyTest(r keystore.Ref, what string, err error) *keystore.StoreError {
	return StoreError(r, what, "retry", err)
}
