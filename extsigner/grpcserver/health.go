package grpcserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ksa-go/ksa/extsigner"
)

// Defaults of the health checks.
const (
	// DefaultProbeInterval is Config.ProbeInterval when zero: ten seconds.
	DefaultProbeInterval = 10 * time.Second
	// ReadyWindows is how many probe intervals a signature that succeeded
	// keeps the server ready: a probe that hangs or is late once does not
	// make it unready, two do.
	ReadyWindows = 3
	// ProbeTimeout bounds one probe: a key store that takes longer is
	// taken as not answering.
	ProbeTimeout = 5 * time.Second
)

// HealthService names the ExternalJWTSigner API in the health service
// (besides the server as a whole, ""): the v1 service's full name.
const HealthService = "v1.ExternalJWTSigner"

// healthState is what the server knows of its key store: the last
// signature that succeeded and the last that failed (a Sign or a probe).
type healthState struct {
	interval time.Duration // <= 0: no probes
	now      func() time.Time
	grpc     *health.Server

	// okNanos is the last successful signature's time (Unix nanoseconds),
	// written without the lock on the Sign path; steady is set while the
	// server is serving and no failure is pending, when a success need not
	// take the lock.
	okNanos atomic.Int64
	steady  atomic.Bool

	mu sync.Mutex
	// failing: the last signature that the lock saw failed, at lastFail
	// with lastErr; a success clears it.
	failing     bool
	lastFail    time.Time
	lastErr     error
	serving     bool
	stop        chan struct{}
	stopOnce    sync.Once
	started     sync.Once
	probeRounds sync.WaitGroup
}

func newHealthState(interval time.Duration, now func() time.Time) *healthState {
	if interval == 0 {
		interval = DefaultProbeInterval
	}
	if now == nil {
		now = time.Now
	}
	h := &healthState{interval: interval, now: now, grpc: health.NewServer(), stop: make(chan struct{})}
	h.setServing(false)
	return h
}

// window is how long a successful signature keeps the server ready.
func (h *healthState) window() time.Duration {
	if h.interval <= 0 {
		return ReadyWindows * DefaultProbeInterval
	}
	return ReadyWindows * h.interval
}

// record notes the result of a Sign or probe: a signing key that failed
// (extsigner.ErrSignerFailed, ErrSelfCheck) makes the server unready at
// once, a signature makes it ready again; refused claims say nothing of
// the key store.
func (h *healthState) record(err error) {
	switch {
	case err == nil:
	case errors.Is(err, extsigner.ErrSignerFailed), errors.Is(err, extsigner.ErrSelfCheck):
	default:
		return
	}
	now := h.now()
	if err == nil {
		if n := now.UnixNano(); n > h.okNanos.Load() {
			h.okNanos.Store(n) // racing successes may store an earlier one: close enough
		}
		if h.steady.Load() {
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing = err != nil
	if err != nil {
		h.lastFail, h.lastErr = now, err
	}
	h.update(now)
}

// lastOK is the time of the last successful signature, zero if none.
func (h *healthState) lastOK() time.Time {
	if n := h.okNanos.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// ready says why the server is not ready at now, with h.mu held: nil when
// a signature succeeded within the window and none failed after it.
func (h *healthState) ready(now time.Time) error {
	lastOK := h.lastOK()
	switch {
	case h.failing:
		return fmt.Errorf("the key store failed at %s: %w", h.lastFail.UTC().Format(time.RFC3339), h.lastErr)
	case lastOK.IsZero():
		return errors.New("no signature has succeeded yet")
	case now.Sub(lastOK) > h.window():
		return fmt.Errorf("no signature has succeeded since %s, more than %v ago", lastOK.UTC().Format(time.RFC3339), h.window())
	}
	return nil
}

// update sets the health service's status from the state, with h.mu held.
func (h *healthState) update(now time.Time) {
	ok := h.ready(now) == nil
	if ok != h.serving {
		h.setServing(ok)
	}
	// A success may skip the lock only while nothing it would change is
	// pending: serving, and no failure after the last success.
	h.steady.Store(ok)
}

func (h *healthState) setServing(ok bool) {
	h.serving = ok
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ok {
		st = healthpb.HealthCheckResponse_SERVING
	}
	h.grpc.SetServingStatus("", st)
	h.grpc.SetServingStatus(HealthService, st)
}

// needsProbe reports whether no signature succeeded within the interval,
// or one failed since.
func (h *healthState) needsProbe(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	lastOK := h.lastOK()
	return lastOK.IsZero() || h.failing || now.Sub(lastOK) >= h.interval
}

// Ready reports whether the key store answered recently: nil when a
// signature (a Sign, or a probe) succeeded within the last
// ReadyWindows × ProbeInterval (thirty seconds by default) and no signing
// key failed after it; otherwise an error saying why (the key store's
// error, or since when nothing succeeded). The gRPC health service answers
// SERVING exactly when Ready does, for the server ("") and for
// [HealthService]. Before the first signature it is not ready.
func (s *Server) Ready() error {
	h := s.health
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.update(now)
	return h.ready(now)
}

// CheckHealth runs one round of the health checks that Serve runs at each
// probe interval: unless a Sign succeeded within the interval (and none
// failed since), it signs a probe with the ring's primary key, bounded by
// ProbeTimeout and ctx, and reports it to Config.OnRequest
// (MethodProbe). It returns [Server.Ready]'s answer after it.
func (s *Server) CheckHealth(ctx context.Context) error {
	h := s.health
	if h.interval > 0 && h.needsProbe(h.now()) {
		s.probe(ctx)
	}
	return s.Ready()
}

// probe signs a probe and records it.
func (s *Server) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	start := time.Now()
	id := s.ids.next()
	err := s.ring.Probe(ctx)
	s.health.record(err)
	if s.onRequest != nil {
		ev := Event{Method: MethodProbe, RequestID: id.String(), KeyID: s.ring.Primary().KeyID, Code: codeOf(err), Err: err, Duration: time.Since(start)}
		var serr *extsigner.SignError
		if errors.As(err, &serr) {
			ev.KeyID = serr.KeyID
		}
		s.onRequest(ev)
	}
}

// startProbes starts the probe loop once, if probes are on.
func (h *healthState) startProbes(s *Server) {
	if h.interval <= 0 {
		return
	}
	h.started.Do(func() {
		h.probeRounds.Add(1)
		go func() {
			defer h.probeRounds.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-h.stop
				cancel()
			}()
			tick := time.NewTicker(h.interval)
			defer tick.Stop()
			for {
				_ = s.CheckHealth(ctx)
				select {
				case <-h.stop:
					return
				case <-tick.C:
				}
			}
		}()
	})
}

// stopProbes ends the probe loop and waits for a round under way.
func (h *healthState) stopProbes() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.probeRounds.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.setServing(false)
	h.steady.Store(false)
}

// requestIDs makes the IDs of requests: a random prefix per server and a
// counter, unique in the process without a shared lock.
type requestIDs struct {
	prefix string
	n      *atomic.Uint64
}

func newRequestIDs() requestIDs {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand never fails
	return requestIDs{prefix: hex.EncodeToString(b), n: new(atomic.Uint64)}
}

// requestID is one request's ID, formatted only when needed.
type requestID struct {
	prefix string
	n      uint64
}

func (ids requestIDs) next() requestID { return requestID{ids.prefix, ids.n.Add(1)} }

// String returns "<prefix>-<n>", such as "5f3a9c1e-42".
func (id requestID) String() string { return id.prefix + "-" + strconv.FormatUint(id.n, 10) }
