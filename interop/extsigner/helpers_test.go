// Package extsigner_test proves ksa's external JWT signer (extsigner)
// against Kubernetes itself:
//
//   - Kubernetes' own client of the API (pkg/serviceaccount/externaljwt/
//     plugin, what kube-apiserver runs) takes our Metadata, FetchKeys and
//     Sign answers for every key type, follows a rotation, and reports a
//     failing KMS as Unavailable;
//   - our conformance harness (extsigner/signertest), run against
//     Kubernetes' mock signer, passes it where it is conformant and flags
//     what it skips;
//   - a real kube-apiserver started with --service-account-signing-endpoint
//     (interop/controlplane) signs TokenRequest tokens through our signer;
//     they validate with ksa and with TokenReview; its discovery document
//     and key set are byte for byte oidc.Render of the ring's keys; a full
//     rotation keeps every earlier token valid until its key is retired; a
//     signer restart leaves it validating, and minting again once the
//     signer is back;
//   - the ksa command's signer ("ksa signer serve", built from this
//     checkout): two kube-apiservers on one etcd, each with its own signer
//     reading the same ring file, switch keys at the instant the file
//     says, answer alike and serve the same key set, and under load every
//     token of either passes TokenReview on both, signed with a key its
//     signer publishes, while one signer is killed and started again
//     (ha_test.go); a kube-apiserver moved from key files to the signer
//     with --previous-public-key keeps every earlier token valid
//     (migration_test.go).
//
// Each control-plane scenario is a function of (*testing.T,
// *controlplane.ControlPlane, *signer), run by withSigner for the
// kube-apiserver binary controlplane finds ($KSA_KUBE_APISERVER).
package extsigner_test

import (
	"crypto"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
)

const issuer = "https://kubernetes.default.svc.cluster.local"

// socketPath returns a socket path in a new short temporary directory
// (socket paths are limited to 107 bytes), removed when the test ends.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ksa-signer-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "signer.sock")
}

// signer is ksa's signer serving a ring on a socket; it can be stopped and
// started again on the same socket with the same ring.
type signer struct {
	t    *testing.T
	ring *extsigner.Ring
	sock string
	srv  *grpcserver.Server
	done chan error
}

func startSigner(t *testing.T, ring *extsigner.Ring, sock string) *signer {
	t.Helper()
	s := &signer{t: t, ring: ring, sock: sock}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *signer) start() {
	s.t.Helper()
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: s.ring})
	require.NoError(s.t, err)
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: s.sock})
	require.NoError(s.t, err)
	s.srv, s.done = srv, make(chan error, 1)
	go func() { s.done <- srv.Serve(l) }()
}

// stop stops the server (closing its connections and socket) and waits
// for Serve to return. Stopping a stopped signer does nothing.
func (s *signer) stop() {
	if s.srv == nil {
		return
	}
	s.srv.Stop()
	assert.NoError(s.t, <-s.done)
	s.srv = nil
}

// offsetClock is the real clock plus an offset a test moves forward: the
// ring believes time has passed (for rotation steps) while everything else,
// kube-apiserver included, runs on the real clock.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// newRing is a ring with signer as primary, a one-second refresh hint (so
// that kube-apiserver picks up changes quickly) and a one-hour lifetime.
func newRing(t *testing.T, clk *offsetClock, primary crypto.Signer, more ...extsigner.RingKey) *extsigner.Ring {
	t.Helper()
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys:             append([]extsigner.RingKey{{Signer: primary, Role: extsigner.RolePrimary}}, more...),
		RefreshHint:      time.Second,
		MaxTokenLifetime: time.Hour,
		Now:              clk.Now,
	})
	require.NoError(t, err)
	return ring
}

// eventually polls cond every 100 ms until it holds or timeout passes,
// then fails the test with what.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("not within %v: %s", timeout, what)
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-tick.C:
		}
	}
}
