package podcertctl_test

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// storeKey is a CA key in a key store: it fails its next fails
// signatures, blocks while hold is set, and counts the signatures asked.
type storeKey struct {
	crypto.Signer
	fails atomic.Int32
	signs atomic.Int32
	mu    sync.Mutex
	hold  chan struct{}
}

func (k *storeKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	k.signs.Add(1)
	k.mu.Lock()
	hold := k.hold
	k.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if k.fails.Add(-1) >= 0 {
		return nil, errors.New("CKR_DEVICE_REMOVED")
	}
	return k.Signer.Sign(r, digest, opts)
}

// block makes signatures wait until the function returned is called.
func (k *storeKey) block() (release func()) {
	ch := make(chan struct{})
	k.mu.Lock()
	k.hold = ch
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		k.hold = nil
		k.mu.Unlock()
		close(ch)
	}
}

// clock is a settable clock.
type clock struct{ now atomic.Pointer[time.Time] }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) Now() time.Time          { return *c.now.Load() }
func (c *clock) set(t time.Time)         { c.now.Store(&t) }
func (c *clock) add(d time.Duration)     { c.set(c.Now().Add(d)) }
func newStoreKey(t *testing.T) *storeKey { return &storeKey{Signer: newCAKey(t)} }

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the JSON log lines written so far.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// A CA key that fails is not the request's fault: the request is tried
// again past MaxRetries until the key signs, every failure is counted as
// a CA key error (not a write error), and every log line about the
// request names it by namespace, name and UID.
func TestControllerRetriesCAKeyErrorsPastMaxRetries(t *testing.T) {
	key := newStoreKey(t)
	signer := newSignerWithKey(t, key)
	const failures = 5
	key.fails.Store(failures)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1", UID: "6a1f3e2d-5c4b-4c1e-9a7f-1b2c3d4e5f60"},
		Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(pcr)
	var logs syncBuffer
	ctl, events, stop := start(t, cs, podcertctl.Config{Signer: signer, CAKey: key, APIVersion: podcertctl.V1, MaxRetries: 2,
		Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for i := range failures {
		e := next(t, events)
		require.Equal(t, podcertctl.CAKeyFailed, e.Kind, "attempt %d", i+1)
		require.ErrorIs(t, e.Err, podcert.ErrSigning, "attempt %d", i+1)
		require.ErrorContains(t, e.Err, "CKR_DEVICE_REMOVED")
		require.True(t, e.Retry, "attempt %d: a key-store failure is not the request's fault: tried again", i+1)
	}
	e := next(t, events)
	require.Equal(t, podcertctl.Decided, e.Kind)
	require.NoError(t, e.Err)
	require.NotNil(t, e.Decision)
	assert.Equal(t, podcert.Issued, e.Decision.Outcome)
	assert.Equal(t, podcertctl.Stats{Issued: 1, CAKeyErrors: failures}, ctl.Stats())

	stop() // every line written
	var about, caLines int
	for _, line := range logs.lines(t) {
		if line["name"] == nil {
			continue
		}
		about++
		assert.Equal(t, "shop", line["namespace"], line)
		assert.Equal(t, "req-1", line["name"], line)
		assert.Equal(t, string(pcr.UID), line["uid"], line)
		if strings.Contains(line["msg"].(string), "CA key") {
			caLines++
			assert.Equal(t, "WARN", line["level"], line)
			assert.Contains(t, line["err"], "CKR_DEVICE_REMOVED")
		}
	}
	assert.Equal(t, failures+1, about, "one line per attempt")
	assert.Equal(t, failures, caLines)
}

func TestReady(t *testing.T) {
	key := newStoreKey(t)
	signer := newSignerWithKey(t, key)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(pcr)
	var apiDown atomic.Bool
	cs.PrependReactor("list", "podcertificaterequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		if apiDown.Load() {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
	clk := newClock(t0)
	// The API server's answer is kept an hour: the probes below are the
	// CA key's (TestReadyListsOncePerInterval tests the lists).
	const apiInterval = time.Hour
	cfg := podcertctl.Config{Client: fakeClient(t, cs), Signer: signer, CAKey: key, APIVersion: podcertctl.V1, Now: clk.Now, APICheckInterval: apiInterval}
	events := make(chan podcertctl.Event, 16)
	cfg.Observe = func(e podcertctl.Event) { events <- e }
	ctl, err := podcertctl.New(cfg)
	require.NoError(t, err)
	require.ErrorIs(t, ctl.Ready(t.Context()), podcertctl.ErrNotSynced, "before Run")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	e := next(t, events) // decided: the CA key signed a certificate at t0
	require.Equal(t, podcertctl.Decided, e.Kind)
	signs := key.signs.Load()

	step := func(name string, advance time.Duration, wantErr error, wantSigns int32) {
		t.Helper()
		clk.add(advance)
		err := ctl.Ready(t.Context())
		if wantErr == nil {
			assert.NoError(t, err, name)
		} else {
			assert.ErrorIs(t, err, wantErr, name)
		}
		assert.Equal(t, wantSigns, key.signs.Load()-signs, name+": probe signatures")
		signs = key.signs.Load()
	}
	step("a certificate signed just now: no probe", 0, nil, 0)
	step("29s later: still recent", podcertctl.DefaultCAProbeInterval-time.Second, nil, 0)
	step("30s after the certificate: a probe", time.Second, nil, 1)
	key.fails.Store(1)
	step("the probe fails", podcertctl.DefaultCAProbeInterval, podcertctl.ErrCAKey, 1)
	probeFailed := nextEvent(t, events)
	for probeFailed.Kind == podcertctl.Skipped { // the informer read the status written
		probeFailed = nextEvent(t, events)
	}
	assert.Equal(t, podcertctl.CAKeyFailed, probeFailed.Kind)
	assert.Empty(t, probeFailed.Name, "a probe is about no request")
	assert.ErrorContains(t, probeFailed.Err, "CKR_DEVICE_REMOVED")
	assert.Equal(t, int64(1), ctl.Stats().CAKeyErrors)
	step("a failure is not kept: probed again at once", 0, nil, 1)
	apiDown.Store(true)
	step("the API server does not answer (its last list is older than the interval)", apiInterval, podcertctl.ErrAPIServer, 0)
	apiDown.Store(false)
	step("the API server answers again", apiInterval, nil, 1)

	// A key store that hangs: the check gives up with its context; checks
	// meanwhile wait for the one probe under way.
	release := key.block()
	clk.add(podcertctl.DefaultCAProbeInterval)
	short, stop := context.WithCancel(t.Context())
	stop()
	err = ctl.Ready(short)
	require.ErrorIs(t, err, podcertctl.ErrCAKey)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, ctl.Ready(short), podcertctl.ErrCAKey)
	release()
	require.NoError(t, ctl.Ready(t.Context()))
	assert.LessOrEqual(t, key.signs.Load()-signs, int32(2), "one probe for the checks that waited, at most one more")
}

// Without CAKey, Ready judges the key by the certificates it signed.
func TestReadyWithoutCAKey(t *testing.T) {
	key := newStoreKey(t)
	signer := newSignerWithKey(t, key)
	key.fails.Store(1 << 20)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	ctl, events := run(t, fake.NewClientset(pcr), podcertctl.Config{Signer: signer, APIVersion: podcertctl.V1})
	require.Equal(t, podcertctl.CAKeyFailed, next(t, events).Kind)
	require.ErrorIs(t, ctl.Ready(t.Context()), podcertctl.ErrCAKey)
}

// TestReadyListsOncePerInterval: however many readiness checks arrive,
// at once or one after another, the API server gets one list of the
// requests per APICheckInterval, its answer (or error) kept until then:
// anonymous /readyz clients cannot spend the client's rate limit, which
// the status writes share.
func TestReadyListsOncePerInterval(t *testing.T) {
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(pcr)
	var lists atomic.Int32
	var apiDown atomic.Bool
	cs.PrependReactor("list", "podcertificaterequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		if apiDown.Load() {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
	clk := newClock(t0)
	ctl, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1, Now: clk.Now})
	require.Equal(t, podcertctl.Decided, next(t, events).Kind) // listed, synced, and the CA key signed at t0
	lists.Store(0)

	const clients = 64
	step := func(name string, advance time.Duration, wantErr error, wantLists int32) {
		t.Helper()
		clk.add(advance)
		errs := make(chan error, clients)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() { errs <- ctl.Ready(t.Context()) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if wantErr == nil {
				require.NoError(t, err, name)
			} else {
				require.ErrorIs(t, err, wantErr, name)
			}
		}
		assert.Equal(t, wantLists, lists.Swap(0), name+": lists sent")
	}
	step("64 checks at once: one list", 0, nil, 1)
	step("64 more within the interval: none", podcertctl.DefaultAPICheckInterval-time.Second, nil, 0)
	step("the interval passed: one list", time.Second, nil, 1)
	apiDown.Store(true)
	step("the API server fails: one list", podcertctl.DefaultAPICheckInterval, podcertctl.ErrAPIServer, 1)
	apiDown.Store(false)
	step("its failure is kept for the interval: none", time.Second, podcertctl.ErrAPIServer, 0)
	step("the interval passed: one list, ready again", podcertctl.DefaultAPICheckInterval, nil, 1)
}
