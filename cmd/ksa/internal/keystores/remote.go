//go:build !ksa_noawskms || !ksa_nocloudkms || !ksa_noazurekms

package keystores

import (
	"bytes"
	"context"
	"crypto"
	"crypto/elliptic"
	"fmt"
	"io"
	"slices"

	"github.com/ksa-go/ksa/keystore"
)

// MaxRemoteCalls bounds the signing calls to one remote key in flight at
// once: a key store that stops answering holds at most this many calls
// (each ends within go.step.sm's 15 s), and later signatures wait for one
// to end, or for their caller's context.
const MaxRemoteCalls = 64

// remoteSigner is a key in a remote key store: its public key read once,
// each signature a call that runs aside so that the caller's context ends
// the wait.
type remoteSigner struct {
	ref   keystore.Ref
	pub   crypto.PublicKey
	inner crypto.Signer
	// classify turns the store's error into an Error.
	classify func(keystore.Ref, string, error) *Error
	calls    chan struct{}
}

func newRemoteSigner(ref keystore.Ref, inner crypto.Signer, classify func(keystore.Ref, string, error) *Error) *remoteSigner {
	return &remoteSigner{ref: ref, pub: inner.Public(), inner: inner, classify: classify, calls: make(chan struct{}, MaxRemoteCalls)}
}

func (s *remoteSigner) Public() crypto.PublicKey { return s.pub }

func (s *remoteSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.SignContext(context.Background(), rand, digest, opts)
}

// SignContext returns the signature, or an error when ctx ends first; the
// call itself then ends on its own.
func (s *remoteSigner) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	select {
	case s.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, s.classify(s.ref, "signing failed", ctxError(ctx))
	}
	// The call may outlive this one, and the caller's digest.
	digest = bytes.Clone(digest)
	sig, err := aside(ctx, func() ([]byte, error) {
		defer func() { <-s.calls }()
		return s.inner.Sign(rand, digest, opts)
	})
	if err != nil {
		return nil, s.classify(s.ref, "signing failed", err)
	}
	return sig, nil
}

// aside runs f in a goroutine of its own and returns its result, or
// ctx's error (and its cause, when it has one of its own) when ctx ends
// first.
func aside[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctxError(ctx)
	}
}

// remote returns the manager of a remote key store for configuration key,
// making it with open the first time.
func (s *Stores) remote(key string, open func() (io.Closer, error)) (io.Closer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if m, ok := s.remotes[key]; ok {
		return m, nil
	}
	m, err := open()
	if err != nil {
		return nil, err
	}
	if s.remotes == nil {
		s.remotes = map[string]io.Closer{}
	}
	s.remotes[key] = m
	return m, nil
}

// supports refuses a key a cloud key store does not make: RSA of other
// sizes than bits, a curve not in curves.
func supports(r keystore.Ref, store string, spec KeySpec, bits []int, curves ...elliptic.Curve) error {
	if spec.RSA && slices.Contains(bits, spec.Bits) || !spec.RSA && slices.Contains(curves, spec.Curve) {
		return nil
	}
	var names []string
	for _, c := range curves {
		names = append(names, c.Params().Name)
	}
	return storeError(r, fmt.Sprintf("%s does not make %s keys", store, spec),
		fmt.Sprintf("make an RSA key of %v bits or an ECDSA key on %v", bits, names), nil)
}
