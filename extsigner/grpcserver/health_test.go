package grpcserver_test

import (
	"context"
	"crypto"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
)

// switchable is a KMS key that fails while down is set.
type switchable struct {
	key   crypto.Signer
	down  atomic.Bool
	calls atomic.Int64
}

var errKMSDown = errors.New("kms: connection refused")

func (s *switchable) signer() extsigner.ContextSigner {
	return extsigner.SignerFunc(s.key.Public(), func(_ context.Context, d []byte, o crypto.SignerOpts) ([]byte, error) {
		s.calls.Add(1)
		if s.down.Load() {
			return nil, errKMSDown
		}
		return s.key.Sign(nil, d, o)
	})
}

// events collects what OnRequest reports.
type events struct {
	mu  sync.Mutex
	all []grpcserver.Event
}

func (e *events) add(ev grpcserver.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) of(method string) []grpcserver.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []grpcserver.Event
	for _, ev := range e.all {
		if ev.Method == method {
			out = append(out, ev)
		}
	}
	return out
}

// TestHealth: the server is ready, and the health service SERVING, exactly
// while the key store answered recently: a probe when no Sign did within
// the interval, ready for three intervals after a success, unready at once
// when the key store fails, ready again when it answers.
func TestHealth(t *testing.T) {
	clk := newClock()
	kms := &switchable{key: key("p256")}
	ring := newRing(t, clk, kms.signer())
	var evs events
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring, ProbeInterval: 10 * time.Second, Now: clk.Now, OnRequest: evs.add})
	require.NoError(t, err)
	// On a gRPC server of the test's, which runs no probe of its own: the
	// test calls CheckHealth at each "interval".
	conn := serveOn(t, srv)
	signer := externaljwtv1.NewExternalJWTSignerClient(conn)
	health := healthpb.NewHealthClient(conn)
	ctx := t.Context()
	healthOf := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		var got []healthpb.HealthCheckResponse_ServingStatus
		for _, svc := range []string{"", grpcserver.HealthService} {
			resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
			require.NoError(t, err)
			got = append(got, resp.Status)
		}
		require.Equal(t, got[0], got[1], "the server and its service alike")
		return got[0]
	}

	err = srv.Ready()
	require.Error(t, err, "not ready before the first signature")
	assert.Contains(t, err.Error(), "no signature has succeeded yet")
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, healthOf())

	require.NoError(t, srv.CheckHealth(ctx), "a probe signs")
	assert.Len(t, evs.of(grpcserver.MethodProbe), 1)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, healthOf())

	clk.Advance(9 * time.Second)
	require.NoError(t, srv.CheckHealth(ctx))
	assert.Len(t, evs.of(grpcserver.MethodProbe), 1, "within the interval: no probe")

	clk.Advance(30*time.Second - 9*time.Second)
	require.NoError(t, srv.Ready(), "ready for three intervals")
	clk.Advance(time.Nanosecond)
	err = srv.Ready()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no signature has succeeded since")
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, healthOf())

	// A Sign proves the key store as a probe does.
	_, err = signer.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: encodeClaims(testClaims(clk.Now(), time.Hour))})
	require.NoError(t, err)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, healthOf())
	require.NoError(t, srv.CheckHealth(ctx))
	assert.Len(t, evs.of(grpcserver.MethodProbe), 1, "a Sign succeeded within the interval")

	// The key store fails: a Sign makes the server unready at once, with
	// its error, and the next round probes again.
	kms.down.Store(true)
	_, err = signer.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: encodeClaims(testClaims(clk.Now(), time.Hour))})
	require.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, healthOf())
	err = srv.CheckHealth(ctx)
	require.ErrorIs(t, err, extsigner.ErrSignerFailed)
	assert.ErrorIs(t, err, errKMSDown)
	assert.Contains(t, err.Error(), "the key store failed at")
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, healthOf())
	probes := evs.of(grpcserver.MethodProbe)
	require.Len(t, probes, 2)
	assert.Equal(t, codes.Unavailable, probes[1].Code)
	assert.Equal(t, ring.Primary().KeyID, probes[1].KeyID)
	assert.ErrorIs(t, probes[1].Err, errKMSDown)

	// It answers again: the next probe makes the server ready at once.
	kms.down.Store(false)
	require.NoError(t, srv.CheckHealth(ctx), "a failure is probed again at the next round")
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, healthOf())
}

// TestHealthDefaults: the documented defaults.
func TestHealthDefaults(t *testing.T) {
	assert.Equal(t, 10*time.Second, grpcserver.DefaultProbeInterval)
	assert.Equal(t, 3, grpcserver.ReadyWindows)
	assert.Equal(t, 5*time.Second, grpcserver.ProbeTimeout)
	assert.Equal(t, "v1.ExternalJWTSigner", grpcserver.HealthService)
	assert.Equal(t, externaljwtv1.ExternalJWTSigner_ServiceDesc.ServiceName, grpcserver.HealthService)

	clk := newClock()
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: newRing(t, clk, key("p256")), Now: clk.Now})
	require.NoError(t, err)
	require.NoError(t, srv.CheckHealth(t.Context()))
	clk.Advance(30 * time.Second)
	require.NoError(t, srv.Ready(), "thirty seconds with the default interval")
	clk.Advance(time.Second)
	assert.Error(t, srv.Ready())
}

// TestHealthOverSocket: Serve probes at once, and the standard health
// client on the signer's socket sees SERVING; after Stop, NOT_SERVING is
// what a last reader would see.
func TestHealthOverSocket(t *testing.T) {
	clk := newClock()
	kms := &switchable{key: key("p256")}
	_, conn := start(t, grpcserver.Config{Ring: newRing(t, clk, kms.signer()), ProbeInterval: time.Hour, Now: clk.Now})
	client := healthpb.NewHealthClient(conn)
	watch, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: grpcserver.HealthService})
	require.NoError(t, err)
	for {
		resp, err := watch.Recv()
		require.NoError(t, err)
		if resp.Status == healthpb.HealthCheckResponse_SERVING {
			break // the first probe signed
		}
	}
	assert.EqualValues(t, 1, kms.calls.Load(), "one probe at the start")
}

// TestProbesOff: with probes off, health follows the Sign requests alone.
func TestProbesOff(t *testing.T) {
	clk := newClock()
	kms := &switchable{key: key("p256")}
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: newRing(t, clk, kms.signer()), ProbeInterval: -1, Now: clk.Now})
	require.NoError(t, err)
	assert.Error(t, srv.CheckHealth(t.Context()))
	assert.Zero(t, kms.calls.Load(), "no probe")
}

// TestRequestIDs: each Sign has an ID, reported in its event and quoted
// in the status message of a failure, so kube-apiserver's log line and
// the signer's name the same request.
func TestRequestIDs(t *testing.T) {
	clk := newClock()
	kms := &switchable{key: key("p256")}
	var evs events
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: newRing(t, clk, kms.signer()), OnRequest: evs.add}))
	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	_, err := client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: claims})
	require.NoError(t, err)
	kms.down.Store(true)
	_, err = client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: claims})
	require.Equal(t, codes.Unavailable, status.Code(err))
	_, err = client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: "e30"})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	msg := status.Convert(err).Message()

	signs := evs.of(grpcserver.MethodSign)
	require.Len(t, signs, 3)
	ids := map[string]bool{}
	for _, ev := range signs {
		require.Regexp(t, `^[0-9a-f]{8}-[0-9]+$`, ev.RequestID)
		ids[ev.RequestID] = true
	}
	assert.Len(t, ids, 3, "distinct IDs")
	assert.Equal(t, "system:serviceaccount:billing:api", signs[0].Subject)
	assert.Equal(t, "2b2b46e2-1f7e-4b0c-9d7e-5f3a1c9e8d21", signs[0].TokenID)
	assert.Equal(t, signs[0].KeyID, signs[1].KeyID, "the key that failed")
	assert.ErrorIs(t, signs[1].Err, errKMSDown)
	assert.True(t, strings.HasSuffix(msg, "(request "+signs[2].RequestID+")"), msg)
	assert.Empty(t, signs[2].KeyID, "claims refused: no key involved")
}

// TestFetchKeysAfterUpdate: FetchKeys answers the ring's keys after an
// Update that changes them but not the data timestamp (a verify-only key
// published from the start). Before, answers were cached by data
// timestamp alone and the new key was never served.
func TestFetchKeysAfterUpdate(t *testing.T) {
	clk := newClock()
	schedule := []extsigner.ScheduledKey{{Signer: key("p256"), Primary: time.Unix(0, 0)}}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: schedule, Now: clk.Now})
	require.NoError(t, err)
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: ring}))
	keys, err := client.FetchKeys(t.Context(), &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	require.Len(t, keys.Keys, 1)

	legacy := excluded(t, key("rsa2048").Public())
	require.NoError(t, ring.Update(extsigner.RingConfig{Schedule: append(schedule, extsigner.ScheduledKey{Key: legacy})}))
	keys, err = client.FetchKeys(t.Context(), &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	require.Len(t, keys.Keys, 2)
	assert.Equal(t, legacy.KeyID, keys.Keys[1].KeyId)
	assert.Equal(t, time.Unix(0, 0).UTC(), keys.DataTimestamp.AsTime(), "the same data timestamp")
}

// serveOn serves srv on a gRPC server of the test's and returns a
// connection to it.
func serveOn(t *testing.T, srv *grpcserver.Server) *grpc.ClientConn {
	t.Helper()
	g := grpc.NewServer(grpcserver.ServerOptions()...)
	srv.Register(g)
	sock := filepath.Join(t.TempDir(), "signer.sock")
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	require.NoError(t, err)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return dial(t, sock)
}

// countingKey is a key store key that counts every call into it.
type countingKey struct {
	key            crypto.Signer
	public, signed atomic.Int64
}

func (c *countingKey) Public() crypto.PublicKey {
	c.public.Add(1)
	return c.key.Public()
}

func (c *countingKey) Sign(r io.Reader, d []byte, o crypto.SignerOpts) ([]byte, error) {
	c.signed.Add(1)
	return c.key.Sign(r, d, o)
}

// TestFetchKeysNeverCallsTheKeyStore: the public keys are read once, when
// the ring takes its keys; FetchKeys and Metadata, however often
// kube-apiserver asks (an unknown kid makes it ask at once), never call
// the key store, and a Sign calls it once.
func TestFetchKeysNeverCallsTheKeyStore(t *testing.T) {
	clk := newClock()
	kms := &countingKey{key: key("p256")}
	ring := newRing(t, clk, kms)
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: ring}))
	kms.public.Store(0)
	for range 20 {
		_, err := client.FetchKeys(t.Context(), &externaljwtv1.FetchKeysRequest{})
		require.NoError(t, err)
		_, err = client.Metadata(t.Context(), &externaljwtv1.MetadataRequest{})
		require.NoError(t, err)
	}
	assert.Zero(t, kms.public.Load(), "no Public call")
	assert.Zero(t, kms.signed.Load(), "no Sign call")
	_, err := client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: encodeClaims(testClaims(clk.Now(), time.Hour))})
	require.NoError(t, err)
	assert.EqualValues(t, 1, kms.signed.Load())
}
