package stepkms

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io"
	"sync"

	"github.com/ksa-go/ksa/keystore"
)

// Classify turns a remote store's error into a keystore.StoreError; what
// says what failed.
type Classify func(r keystore.Ref, what string, err error) *keystore.StoreError

// RemoteSigner is a key in a remote key store: its public key read once,
// each signature a call that runs aside so that the caller's context ends
// the wait, at most a fixed number of calls in flight.
type RemoteSigner struct {
	ref      keystore.Ref
	pub      crypto.PublicKey
	inner    crypto.Signer
	classify Classify
	calls    chan struct{}
}

// NewRemoteSigner wraps inner, the key r names, reading its public key
// now; at most maxCalls signatures are in flight at once
// (keystore.MaxRemoteCalls when maxCalls is not positive).
func NewRemoteSigner(r keystore.Ref, inner crypto.Signer, classify Classify, maxCalls int) *RemoteSigner {
	if maxCalls <= 0 {
		maxCalls = keystore.MaxRemoteCalls
	}
	return &RemoteSigner{ref: r, pub: inner.Public(), inner: inner, classify: classify, calls: make(chan struct{}, maxCalls)}
}

// Public returns the public key read when the signer was made.
func (s *RemoteSigner) Public() crypto.PublicKey { return s.pub }

// Sign signs with no deadline of the caller's.
func (s *RemoteSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.SignContext(context.Background(), rand, digest, opts)
}

// SignContext returns the signature, or an error when ctx ends first; the
// call itself then ends on its own.
func (s *RemoteSigner) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	select {
	case s.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, s.classify(s.ref, "signing failed", CtxError(ctx))
	}
	// The call may outlive this one, and the caller's digest.
	digest = bytes.Clone(digest)
	sig, err := Aside(ctx, func() ([]byte, error) {
		defer func() { <-s.calls }()
		return s.inner.Sign(rand, digest, opts)
	})
	if err != nil {
		return nil, s.classify(s.ref, "signing failed", err)
	}
	return sig, nil
}

// Aside runs f in a goroutine of its own and returns its result, or
// ctx's error (and its cause, when it has one of its own) when ctx ends
// first.
func Aside[T any](ctx context.Context, f func() (T, error)) (T, error) {
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
		return zero, CtxError(ctx)
	}
}

// Clients are the clients of a remote key store, one per configuration
// (a region and profile, a credentials file, an identity), made on first
// use and kept until Close. The zero value is ready; it is safe for
// concurrent use.
type Clients[T io.Closer] struct {
	mu     sync.Mutex
	byKey  map[string]T
	closed bool
}

// Get returns the client of configuration key, made with open the first
// time; after Close, ErrClosed.
func (c *Clients[T]) Get(key string, open func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	if c.closed {
		return zero, ErrClosed
	}
	if m, ok := c.byKey[key]; ok {
		return m, nil
	}
	m, err := open()
	if err != nil {
		return zero, err
	}
	if c.byKey == nil {
		c.byKey = map[string]T{}
	}
	c.byKey[key] = m
	return m, nil
}

// Closed reports whether Close was called.
func (c *Clients[T]) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close closes every client; later Gets fail.
func (c *Clients[T]) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for k, m := range c.byKey {
		errs = append(errs, m.Close())
		delete(c.byKey, k)
	}
	return errors.Join(errs...)
}
