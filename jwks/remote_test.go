package jwks_test

import (
	"cmp"
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// remoteT0 is where every injected clock starts.
var remoteT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// remoteClock is a manual clock, safe for concurrent use.
type remoteClock = testclock.Clock

func newRemoteClock() *remoteClock { return testclock.New(remoteT0) }

// remoteKeys returns three keys with distinct key IDs: Kubernetes' EC and
// RSA test keys and an Ed25519 key.
func remoteKeys(t testing.TB) (a, b, c jwks.Key) {
	t.Helper()
	keys, err := newKeys(testkeys.K8sEC(), testkeys.K8sRSA(), testkeys.Generated("ed25519"))
	require.NoError(t, err)
	return keys[0], keys[1], keys[2]
}

// remoteDoc renders keys as a JWKS document.
func remoteDoc(t testing.TB, keys ...jwks.Key) []byte {
	t.Helper()
	doc, err := jwks.MarshalSet(keys)
	require.NoError(t, err)
	return doc
}

// remoteDocWith appends raw key objects to a JWKS document.
func remoteDocWith(doc []byte, objects ...string) []byte {
	s := strings.TrimSuffix(string(doc), "]}")
	for _, o := range objects {
		if !strings.HasSuffix(s, "[") {
			s += ","
		}
		s += o
	}
	return []byte(s + "]}")
}

// Key objects ParseSet skips, each for another reason.
const (
	remoteOctJWK       = `{"kty":"oct","kid":"oct-1","k":"c2VjcmV0"}`
	remoteSecp256k1JWK = `{"kty":"EC","kid":"k1-1","crv":"secp256k1","x":"AA","y":"AA"}`
	remoteEd448JWK     = `{"kty":"OKP","kid":"ed448-1","crv":"Ed448","x":"AA"}`
)

// remoteResponse is what a remoteServer answers.
type remoteResponse struct {
	// Status zero means 200.
	Status       int
	Body         []byte
	CacheControl string
}

// remoteServer is a JWKS endpoint whose answer a test sets, recording the
// requests it receives.
type remoteServer struct {
	*httptest.Server

	mu       sync.Mutex
	resp     remoteResponse
	requests []http.Header
	// before, when set, runs for each request before it is answered, on
	// the server's goroutine: it may block on a channel or move a clock.
	before func(r *http.Request)
}

func newRemoteServer(t *testing.T, resp remoteResponse) *remoteServer {
	t.Helper()
	s := &remoteServer{resp: resp}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *remoteServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Header.Clone())
	before := s.before
	s.mu.Unlock()
	if before != nil {
		before(r)
	}
	s.mu.Lock()
	resp := s.resp
	s.mu.Unlock()
	writeRemoteResponse(w, resp)
}

func writeRemoteResponse(w http.ResponseWriter, resp remoteResponse) {
	if resp.CacheControl != "" {
		w.Header().Set("Cache-Control", resp.CacheControl)
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	if resp.Status != 0 {
		w.WriteHeader(resp.Status)
	}
	_, _ = w.Write(resp.Body)
}

func (s *remoteServer) set(resp remoteResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp = resp
}

func (s *remoteServer) setBefore(f func(r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = f
}

func (s *remoteServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *remoteServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

// remoteTransport serves requests from a handler in memory, without a
// network, so that synctest can see every goroutine block. A handler that
// blocks should also watch the request's context, as a real server does.
type remoteTransport func(w http.ResponseWriter, r *http.Request)

func (h remoteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// remoteTestURL is the key set address used with remoteTransport.
const remoteTestURL = "https://issuer.test/openid/v1/jwks"

// remoteEvents collects OnFetch events.
type remoteEvents chan jwks.FetchEvent

func newRemoteEvents() remoteEvents { return make(remoteEvents, 1000) }

func (e remoteEvents) hook(ev jwks.FetchEvent) { e <- ev }

// next returns the next event. It must already have been delivered: OnFetch
// runs before the callers waiting on a fetch return.
func (e remoteEvents) next(t testing.TB) jwks.FetchEvent {
	t.Helper()
	select {
	case ev := <-e:
		return ev
	default:
		require.FailNow(t, "no fetch event")
		return jwks.FetchEvent{}
	}
}

// wait blocks for the next event: that of a background refresh, which no
// caller waits for.
func (e remoteEvents) wait(t testing.TB) jwks.FetchEvent {
	t.Helper()
	select {
	case ev := <-e:
		return ev
	case <-t.Context().Done():
		require.FailNow(t, "no fetch event before the test ended")
		return jwks.FetchEvent{}
	}
}

func (e remoteEvents) none(t testing.TB) {
	t.Helper()
	select {
	case ev := <-e:
		require.FailNow(t, "unexpected fetch event", "%+v", ev)
	default:
	}
}

func newTestRemote(t testing.TB, cfg jwks.RemoteConfig) *jwks.Remote {
	t.Helper()
	cfg.InsecureAllowHTTP = true // plain httptest servers
	r, err := jwks.NewRemote(cfg)
	require.NoError(t, err)
	return r
}

// requireKeys checks that keys is exactly want (ID, algorithm, public key).
func requireKeys(t testing.TB, keys []jwks.Key, want ...jwks.Key) {
	t.Helper()
	require.Len(t, keys, len(want))
	for i, w := range want {
		assert.Equal(t, w.KeyID, keys[i].KeyID, "key #%d", i)
		assert.Equal(t, w.Algorithm, keys[i].Algorithm, "key #%d", i)
		pub, ok := keys[i].Public.(interface{ Equal(crypto.PublicKey) bool })
		require.True(t, ok, "key #%d: %T", i, keys[i].Public)
		assert.True(t, pub.Equal(w.Public), "key #%d: public key differs", i)
	}
}

// requireFetchError checks that err is a *FetchError matching ErrFetch and
// returns it.
func requireFetchError(t testing.TB, err error, status int) *jwks.FetchError {
	t.Helper()
	require.ErrorIs(t, err, jwks.ErrFetch)
	var fe *jwks.FetchError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, status, fe.Status)
	return fe
}

func TestRemoteDefaultValues(t *testing.T) {
	// The values the doc comments promise ("a burst of three, then one
	// every ten seconds", "Kubernetes sends max-age=3600", ...).
	assert.Equal(t, 10*time.Second, jwks.DefaultFetchTimeout)
	assert.Equal(t, 10*time.Second, jwks.DefaultRefetchInterval)
	assert.Equal(t, 3, jwks.DefaultRefetchBurst)
	assert.Equal(t, time.Hour, jwks.DefaultCacheAge)
	assert.Equal(t, time.Minute, jwks.DefaultMinCacheAge)
	assert.Equal(t, 24*time.Hour, jwks.DefaultMaxCacheAge)
}

func TestNewRemoteConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     jwks.RemoteConfig
		wantErr bool
	}{
		{name: "https URL only", cfg: jwks.RemoteConfig{URL: "https://issuer.example/openid/v1/jwks"}},
		{name: "http URL refused", cfg: jwks.RemoteConfig{URL: "http://127.0.0.1:8080/jwks"}, wantErr: true},
		{name: "http URL allowed in tests", cfg: jwks.RemoteConfig{URL: "http://127.0.0.1:8080/jwks", InsecureAllowHTTP: true}},
		{name: "scheme in upper case", cfg: jwks.RemoteConfig{URL: "HTTPS://issuer.example/jwks"}},
		{name: "http without a host", cfg: jwks.RemoteConfig{URL: "http://", InsecureAllowHTTP: true}, wantErr: true},
		{name: "min equal to max", cfg: jwks.RemoteConfig{URL: remoteTestURL, MinCacheAge: time.Hour, MaxCacheAge: time.Hour}},
		{name: "min within default max", cfg: jwks.RemoteConfig{URL: remoteTestURL, MinCacheAge: 24 * time.Hour}},
		{name: "missing URL", cfg: jwks.RemoteConfig{}, wantErr: true},
		{name: "URL without scheme", cfg: jwks.RemoteConfig{URL: "issuer.example/jwks"}, wantErr: true},
		{name: "ftp URL", cfg: jwks.RemoteConfig{URL: "ftp://issuer.example/jwks"}, wantErr: true},
		{name: "file URL", cfg: jwks.RemoteConfig{URL: "file:///etc/jwks.json"}, wantErr: true},
		{name: "negative Timeout", cfg: jwks.RemoteConfig{URL: remoteTestURL, Timeout: -1}, wantErr: true},
		{name: "negative RefetchInterval", cfg: jwks.RemoteConfig{URL: remoteTestURL, RefetchInterval: -time.Second}, wantErr: true},
		{name: "negative RefetchBurst", cfg: jwks.RemoteConfig{URL: remoteTestURL, RefetchBurst: -1}, wantErr: true},
		{name: "negative MinCacheAge", cfg: jwks.RemoteConfig{URL: remoteTestURL, MinCacheAge: -time.Minute}, wantErr: true},
		{name: "negative MaxCacheAge", cfg: jwks.RemoteConfig{URL: remoteTestURL, MaxCacheAge: -time.Minute}, wantErr: true},
		{name: "min above max", cfg: jwks.RemoteConfig{URL: remoteTestURL, MinCacheAge: 2 * time.Hour, MaxCacheAge: time.Hour}, wantErr: true},
		{name: "min above default max", cfg: jwks.RemoteConfig{URL: remoteTestURL, MinCacheAge: 25 * time.Hour}, wantErr: true},
		{name: "max below default min", cfg: jwks.RemoteConfig{URL: remoteTestURL, MaxCacheAge: 30 * time.Second}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := jwks.NewRemote(tt.cfg)
			if tt.wantErr {
				// NewRemote's errors carry no sentinel: only their presence
				// is part of the API.
				require.Error(t, err)
				assert.Nil(t, r)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.cfg.URL, r.URL())
		})
	}
}

func TestRemoteLazyFirstFetch(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	clk := newRemoteClock()
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, OnFetch: events.hook})

	assert.Equal(t, srv.URL, r.URL())
	assert.Zero(t, srv.count(), "NewRemote must not fetch")
	assert.Equal(t, jwks.RemoteStats{}, r.Stats())
	events.none(t)

	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	assert.Equal(t, 1, srv.count())
	assert.Equal(t, jwks.FetchInitial, events.next(t).Reason)
}

func TestRemoteFreshKeysAnswerWithoutRequests(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a, b), CacheControl: "max-age=600"})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now})

	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	for i := range 100 {
		clk.Advance(5 * time.Second) // 500 s in all: still fresh
		kid := []string{a.KeyID, b.KeyID, ""}[i%3]
		keys, err := r.Keys(t.Context(), kid)
		require.NoError(t, err)
		switch kid {
		case a.KeyID:
			requireKeys(t, keys, a)
		case b.KeyID:
			requireKeys(t, keys, b)
		default:
			requireKeys(t, keys, a, b)
		}
	}
	assert.Equal(t, 1, srv.count())
}

func TestRemoteDuplicateKeyIDs(t *testing.T) {
	// Keys are served by exact kid, duplicates included, as StaticSource.
	a, b, _ := remoteKeys(t)
	b2 := b
	b2.KeyID = a.KeyID
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a, b2)})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})

	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a, b2)
	assert.Equal(t, 2, r.Stats().Keys)
}

func TestRemoteUnknownKeyIDRefetches(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: events.hook})

	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	events.next(t)

	// The issuer rotates: b appears, and a token signed by b arrives.
	srv.set(remoteResponse{Body: remoteDoc(t, b, a)})
	keys, err := r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)
	assert.Equal(t, 2, srv.count())
	ev := events.next(t)
	assert.Equal(t, jwks.FetchUnknownKeyID, ev.Reason)
	assert.Equal(t, 2, ev.Keys)

	// Now known: no request.
	_, err = r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	assert.Equal(t, 2, srv.count())

	// Still unknown after a fetch: no keys and no error.
	keys, err = r.Keys(t.Context(), "no-such-kid")
	require.NoError(t, err)
	assert.Empty(t, keys)
	assert.Equal(t, 3, srv.count())
}

func TestRemoteRateLimit(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchInterval: 10 * time.Second, RefetchBurst: 2})

	// wantNext, for a refused fetch, is when the next one is allowed, from
	// remoteT0.
	steps := []struct {
		name      string
		advance   time.Duration
		kid       string
		wantFetch bool
		wantNext  time.Duration
	}{
		{name: "first fetch takes a token", kid: a.KeyID, wantFetch: true},
		{name: "unknown kid takes the second token", kid: "x", wantFetch: true},
		{name: "burst spent", kid: "y", wantNext: 10 * time.Second},
		{name: "half an interval is not a token", advance: 5 * time.Second, kid: "y", wantNext: 10 * time.Second},
		{name: "one interval gives one token", advance: 5 * time.Second, kid: "y", wantFetch: true},
		{name: "and only one", kid: "z", wantNext: 20 * time.Second},
		{name: "known kid needs no token", kid: a.KeyID},
		{name: "clock going back gives no token", advance: -time.Minute, kid: "z", wantNext: 20 * time.Second},
		{name: "nor does coming back", advance: time.Minute, kid: "z", wantNext: 20 * time.Second},
		{name: "long idle refills the burst", advance: 10 * time.Minute, kid: "z", wantFetch: true},
		{name: "second token of the refilled burst", kid: "z", wantFetch: true},
		{name: "refill is capped at the burst", kid: "z", wantNext: 10*time.Minute + 20*time.Second},
	}
	for _, st := range steps {
		clk.Advance(st.advance)
		before := srv.count()
		keys, err := r.Keys(t.Context(), st.kid)
		fetched := srv.count() - before
		assert.Equal(t, st.wantFetch, fetched == 1, "%s: %d requests", st.name, fetched)
		switch {
		case st.kid == a.KeyID:
			require.NoError(t, err, st.name)
			requireKeys(t, keys, a)
		case st.wantFetch:
			require.NoError(t, err, "%s: still unknown after a fetch", st.name)
			assert.Empty(t, keys, st.name)
		default:
			assert.Empty(t, keys, st.name)
			limited := requireRateLimited(t, err, srv.URL, st.kid)
			assert.Equal(t, remoteT0.Add(st.wantNext), limited.Next, st.name)
		}
	}
}

// requireRateLimited checks the refusal of an unknown kid while fetches
// are rate-limited.
func requireRateLimited(t *testing.T, err error, url, kid string) *jwks.RateLimitError {
	t.Helper()
	require.ErrorIs(t, err, jwks.ErrRateLimited)
	var limited *jwks.RateLimitError
	require.ErrorAs(t, err, &limited)
	assert.Equal(t, kid, limited.KeyID)
	assert.Equal(t, url, limited.URL)
	assert.Contains(t, err.Error(), limited.Next.UTC().Format(time.RFC3339))
	return limited
}

func TestRemoteRateLimitCountsFailures(t *testing.T) {
	srv := newRemoteServer(t, remoteResponse{Status: http.StatusInternalServerError})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchInterval: 10 * time.Second, RefetchBurst: 2})

	for i := range 2 {
		_, err := r.Keys(t.Context(), "kid")
		requireFetchError(t, err, http.StatusInternalServerError)
		assert.Equal(t, i+1, srv.count())
	}
	// Burst spent by failures: no request, an error (no keys are held)
	// that carries the last failure.
	keys, err := r.Keys(t.Context(), "kid")
	assert.Nil(t, keys)
	requireFetchError(t, err, 0)
	assert.ErrorIs(t, err, r.Stats().LastError)
	assert.Equal(t, 2, srv.count())

	clk.Advance(10 * time.Second)
	_, err = r.Keys(t.Context(), "kid")
	requireFetchError(t, err, http.StatusInternalServerError)
	assert.Equal(t, 3, srv.count())
	assert.Equal(t, int64(3), r.Stats().Failures)
}

// TestRemoteRateLimitedUnknownKeyID: tokens naming unknown key IDs make one
// fetch; then each is refused with when the next fetch may happen, until
// it may, and the issuer is asked again then.
func TestRemoteRateLimitedUnknownKeyID(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchBurst: 1})

	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	next := remoteT0.Add(jwks.DefaultRefetchInterval)
	for range 10 {
		keys, err := r.Keys(t.Context(), "unknown")
		assert.Empty(t, keys)
		limited := requireRateLimited(t, err, srv.URL, "unknown")
		assert.Equal(t, next, limited.Next)
		assert.NoError(t, limited.Last, "the last fetch succeeded")
		assert.NotErrorIs(t, err, jwks.ErrFetch, "nothing failed to fetch")
		assert.Equal(t, `jwks: key ID "unknown" unknown; fetching `+srv.URL+` again is rate limited until 2026-03-01T12:00:10Z`, err.Error())
	}
	assert.Equal(t, 1, srv.count())

	// A nanosecond early: still refused.
	clk.Advance(jwks.DefaultRefetchInterval - time.Nanosecond)
	_, err = r.Keys(t.Context(), b.KeyID)
	requireRateLimited(t, err, srv.URL, b.KeyID)
	assert.Equal(t, 1, srv.count())

	// At Next: fetched, and the issuer's new key is found.
	srv.set(remoteResponse{Body: remoteDoc(t, a, b)})
	clk.Advance(time.Nanosecond)
	keys, err := r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)
	assert.Equal(t, 2, srv.count())
}

// TestRemoteRateLimitedAfterFailure: the refusal of an unknown kid carries
// the last fetch's failure.
func TestRemoteRateLimitedAfterFailure(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchBurst: 2, RefetchInterval: time.Minute})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)

	srv.set(remoteResponse{Status: http.StatusServiceUnavailable})
	_, err = r.Keys(t.Context(), "x")
	requireFetchError(t, err, http.StatusServiceUnavailable)

	clk.Advance(30 * time.Second)
	_, err = r.Keys(t.Context(), "x")
	limited := requireRateLimited(t, err, srv.URL, "x")
	assert.Equal(t, remoteT0.Add(time.Minute), limited.Next, "half a token after 30 s, the other half in 30 s more")
	requireFetchError(t, limited.Last, http.StatusServiceUnavailable)
	assert.ErrorIs(t, err, r.Stats().LastError)
	assert.Equal(t, 2, srv.count())
}

func TestRemoteMergesConcurrentFetches(t *testing.T) {
	a, b, _ := remoteKeys(t)
	synctest.Test(t, func(t *testing.T) {
		var requests atomic.Int64
		release := make(chan struct{})
		var mu sync.Mutex
		doc := remoteDoc(t, a)
		tr := remoteTransport(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			mu.Lock()
			defer mu.Unlock()
			writeRemoteResponse(w, remoteResponse{Body: doc})
		})
		r := newTestRemote(t, jwks.RemoteConfig{URL: remoteTestURL, Client: &http.Client{Transport: tr}, RefetchBurst: 100})

		const n = 50
		type result struct {
			refresh bool
			keys    []jwks.Key
			err     error
		}
		phase := func(kid string, refreshers int, want jwks.Key) {
			results := make(chan result, n+refreshers)
			for range n {
				go func() {
					keys, err := r.Keys(t.Context(), kid)
					results <- result{keys: keys, err: err}
				}()
			}
			for range refreshers {
				go func() { results <- result{refresh: true, err: r.Refresh(t.Context())} }()
			}
			synctest.Wait() // every caller is blocked on the one request
			assert.Equal(t, int64(1), requests.Load())
			release <- struct{}{}
			for range n + refreshers {
				res := <-results
				require.NoError(t, res.err)
				if !res.refresh {
					requireKeys(t, res.keys, want)
				}
			}
			assert.Equal(t, int64(1), requests.Load())
			requests.Store(0)
		}

		phase(a.KeyID, 0, a) // the first fetch
		mu.Lock()
		doc = remoteDoc(t, a, b)
		mu.Unlock()
		phase(b.KeyID, 5, b) // an unknown kid, Refresh joining
	})
}

func TestRemoteCallerCancelKeepsFetchGoing(t *testing.T) {
	a, _, _ := remoteKeys(t)
	synctest.Test(t, func(t *testing.T) {
		var requests atomic.Int64
		release := make(chan struct{})
		doc := remoteDoc(t, a)
		tr := remoteTransport(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			select {
			case <-release:
			case <-r.Context().Done(): // would fail the fetch
				return
			}
			writeRemoteResponse(w, remoteResponse{Body: doc})
		})
		events := newRemoteEvents()
		r := newTestRemote(t, jwks.RemoteConfig{URL: remoteTestURL, Client: &http.Client{Transport: tr}, OnFetch: events.hook})

		ctxA, cancelA := context.WithCancel(t.Context())
		errA := make(chan error, 1)
		go func() {
			_, err := r.Keys(ctxA, a.KeyID)
			errA <- err
		}()
		synctest.Wait() // A's fetch is in the handler

		type result struct {
			keys []jwks.Key
			err  error
		}
		resB := make(chan result, 1)
		go func() {
			keys, err := r.Keys(t.Context(), a.KeyID)
			resB <- result{keys, err}
		}()
		synctest.Wait() // B waits on A's fetch

		cancelA()
		err := <-errA
		require.ErrorIs(t, err, context.Canceled)
		requireFetchError(t, err, 0)

		synctest.Wait()
		select {
		case res := <-resB:
			require.FailNow(t, "B returned with A", "%+v", res)
		default:
		}

		close(release)
		res := <-resB
		require.NoError(t, res.err)
		requireKeys(t, res.keys, a)
		assert.Equal(t, int64(1), requests.Load())
		ev := events.next(t)
		require.NoError(t, ev.Err)
		assert.Equal(t, 1, ev.Keys)
	})
}

func TestRemoteCallerCancelAloneStillCompletesFetch(t *testing.T) {
	// Over a real connection: the caller gives up, the fetch it started
	// completes and fills the cache.
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	arrived, release := make(chan struct{}), make(chan struct{})
	srv.setBefore(func(*http.Request) {
		arrived <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	fetched := make(chan jwks.FetchEvent, 1)
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: func(ev jwks.FetchEvent) { fetched <- ev }})

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Keys(ctx, a.KeyID)
		errc <- err
	}()
	<-arrived
	cancel()
	err := <-errc
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, jwks.ErrFetch)

	release <- struct{}{}
	ev := <-fetched
	require.NoError(t, ev.Err)
	assert.Equal(t, 1, r.Stats().Keys)

	srv.setBefore(nil)
	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	assert.Equal(t, 1, srv.count())
}

func TestRemoteFetchRunsWithCallerValues(t *testing.T) {
	type ctxKey struct{}
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	var got any
	var hasDeadline bool
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, BearerToken: func(ctx context.Context) (string, error) {
		got = ctx.Value(ctxKey{})
		_, hasDeadline = ctx.Deadline()
		return "tok", nil
	}})

	_, err := r.Keys(context.WithValue(t.Context(), ctxKey{}, "caller value"), a.KeyID)
	require.NoError(t, err)
	assert.Equal(t, "caller value", got)
	assert.True(t, hasDeadline, "the fetch is bounded by Timeout")
}

func TestRemoteFailedFetchKeepsOldKeys(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)

	srv.set(remoteResponse{Status: http.StatusBadGateway})
	_, err = r.Keys(t.Context(), b.KeyID)
	requireFetchError(t, err, http.StatusBadGateway)
	requireFetchError(t, r.Refresh(t.Context()), http.StatusBadGateway)

	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	st := r.Stats()
	assert.Equal(t, 1, st.Keys)
	assert.Equal(t, int64(3), st.Fetches)
	assert.Equal(t, int64(2), st.Failures)
	assert.Equal(t, 3, srv.count())
}

func TestRemoteFirstFailureIsRetried(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Status: http.StatusServiceUnavailable})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchBurst: 1, RefetchInterval: 10 * time.Second})

	_, err := r.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, http.StatusServiceUnavailable)
	srv.set(remoteResponse{Body: remoteDoc(t, a)})

	// Not before the limiter allows it...
	_, err = r.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, 0)
	assert.Equal(t, 1, srv.count())

	// ...but then, by the next call (jwx #922 never retries).
	clk.Advance(10 * time.Second)
	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	assert.Equal(t, 2, srv.count())
}

func TestRemoteFirstFailureRetriedWithDefaults(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Status: http.StatusServiceUnavailable})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})

	_, err := r.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, http.StatusServiceUnavailable)
	srv.set(remoteResponse{Body: remoteDoc(t, a)})
	keys, err := r.Keys(t.Context(), a.KeyID) // the burst allows it at once
	require.NoError(t, err)
	requireKeys(t, keys, a)
}

func TestRemoteExpiredKeys(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a), CacheControl: "max-age=300"})
	clk := newRemoteClock()
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, OnFetch: events.hook, RefetchBurst: 1, RefetchInterval: 10 * time.Second})

	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	events.next(t)
	assert.Equal(t, remoteT0.Add(300*time.Second), r.Stats().Expires)

	clk.Advance(299 * time.Second)
	_, err = r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	assert.Equal(t, 1, srv.count(), "fresh until max-age")

	// Stale at max-age: the known kid is answered at once from the held
	// keys while the set is refreshed in the background.
	clk.Advance(time.Second)
	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	assert.Equal(t, jwks.FetchExpired, events.wait(t).Reason)
	assert.Equal(t, 2, srv.count(), "stale at max-age")

	// The issuer fails: the stale keys keep answering.
	srv.set(remoteResponse{Status: http.StatusInternalServerError})
	clk.Advance(300 * time.Second)
	staleUntil := r.Stats().Expires
	keys, err = r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	ev := events.wait(t)
	assert.Equal(t, 3, srv.count())
	assert.Equal(t, jwks.FetchExpired, ev.Reason)
	requireFetchError(t, ev.Err, http.StatusInternalServerError)
	assert.Equal(t, staleUntil, r.Stats().Expires, "a failure does not extend freshness")

	// Rate-limited: stale keys, no request.
	keys, err = r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	assert.Equal(t, 3, srv.count())
	// Nor for an unknown kid, refused with when a fetch may happen.
	_, err = r.Keys(t.Context(), b.KeyID)
	limited := requireRateLimited(t, err, srv.URL, b.KeyID)
	assert.Equal(t, clk.Now().Add(10*time.Second), limited.Next)
	assert.Equal(t, 3, srv.count())

	// Stale, kid unknown, fetch failed: no key can answer.
	clk.Advance(10 * time.Second)
	_, err = r.Keys(t.Context(), b.KeyID)
	requireFetchError(t, err, http.StatusInternalServerError)
	assert.Equal(t, 4, srv.count())

	// The issuer is back: fresh keys again.
	srv.set(remoteResponse{Body: remoteDoc(t, b), CacheControl: "max-age=300"})
	clk.Advance(10 * time.Second)
	keys, err = r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)
	assert.Equal(t, clk.Now().Add(300*time.Second), r.Stats().Expires)
}

func TestRemoteNoUsableKeysIsFailure(t *testing.T) {
	a, _, _ := remoteKeys(t)
	tests := []struct {
		name        string
		body        string
		wantSkipped int
		wantKind    error
	}{
		{name: "empty keys array", body: `{"keys":[]}`, wantKind: jwks.ErrNoKeys},
		{name: "only unsupported keys", body: string(remoteDocWith([]byte(`{"keys":[]}`), remoteOctJWK, remoteSecp256k1JWK)), wantSkipped: 2, wantKind: jwks.ErrNoKeys},
		{name: "not a key set", body: `{"kid":"x"}`, wantKind: jwks.ErrMalformedSet},
		{name: "not JSON", body: `<html>login</html>`, wantKind: jwks.ErrMalformedSet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRemoteServer(t, remoteResponse{Body: []byte(tt.body)})
			events := newRemoteEvents()
			r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: events.hook})

			// With no keys held: an error.
			_, err := r.Keys(t.Context(), a.KeyID)
			requireFetchError(t, err, http.StatusOK)
			assert.ErrorIs(t, err, tt.wantKind)
			ev := events.next(t)
			assert.Zero(t, ev.Keys)
			assert.Equal(t, tt.wantSkipped, ev.Skipped)
			if tt.wantSkipped > 0 {
				var me *jwks.MemberError
				assert.ErrorAs(t, err, &me)
			}

			// With keys held: a failure that keeps them.
			srv.set(remoteResponse{Body: remoteDoc(t, a)})
			require.NoError(t, r.Refresh(t.Context()))
			srv.set(remoteResponse{Body: []byte(tt.body)})
			err = r.Refresh(t.Context())
			requireFetchError(t, err, http.StatusOK)
			assert.ErrorIs(t, err, tt.wantKind)
			keys, err := r.Keys(t.Context(), a.KeyID)
			require.NoError(t, err)
			requireKeys(t, keys, a)
			st := r.Stats()
			assert.Equal(t, 1, st.Keys)
			assert.Equal(t, int64(2), st.Failures)
		})
	}
}

func TestRemoteUnknownKeyIDFetchFails(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)

	srv.set(remoteResponse{Status: http.StatusServiceUnavailable})
	keys, err := r.Keys(t.Context(), b.KeyID)
	assert.Nil(t, keys)
	fe := requireFetchError(t, err, http.StatusServiceUnavailable)
	assert.Equal(t, srv.URL, fe.URL)
}

func TestRemoteCacheControl(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		min, max time.Duration
		want     time.Duration
	}{
		{name: "absent", header: "", want: jwks.DefaultCacheAge},
		{name: "Kubernetes", header: "public, max-age=3600", want: time.Hour},
		{name: "max-age", header: "max-age=300", want: 5 * time.Minute},
		{name: "zero", header: "max-age=0", want: jwks.DefaultMinCacheAge},
		{name: "below min", header: "max-age=10", want: jwks.DefaultMinCacheAge},
		{name: "above max", header: "max-age=172800", want: jwks.DefaultMaxCacheAge},
		{name: "at max", header: "max-age=86400", want: jwks.DefaultMaxCacheAge},
		{name: "beyond int64", header: "max-age=99999999999999999999999", want: jwks.DefaultMaxCacheAge},
		{name: "no-store", header: "no-store", want: jwks.DefaultMinCacheAge},
		{name: "no-cache", header: "no-cache", want: jwks.DefaultMinCacheAge},
		{name: "qualified no-cache only covers the fields it names", header: `no-cache="set-cookie"`, want: jwks.DefaultCacheAge},
		{name: "no-cache after max-age", header: "max-age=600, no-cache", want: jwks.DefaultMinCacheAge},
		{name: "no-store after a large max-age", header: "max-age=999999, no-store", want: jwks.DefaultMinCacheAge},
		{name: "no-store before max-age", header: "no-store, max-age=600", want: jwks.DefaultMinCacheAge},
		{name: "quoted", header: `max-age="600"`, want: 10 * time.Minute},
		{name: "upper case", header: "Public, MAX-AGE=600", want: 10 * time.Minute},
		{name: "no spaces", header: "private,max-age=600,must-revalidate", want: 10 * time.Minute},
		{name: "spaces", header: "  max-age=600  ", want: 10 * time.Minute},
		{name: "last max-age wins", header: "max-age=120, max-age=600", want: 10 * time.Minute},
		{name: "garbage", header: "max-age=abc", want: jwks.DefaultMinCacheAge},
		{name: "negative", header: "max-age=-5", want: jwks.DefaultMinCacheAge},
		{name: "signed", header: "max-age=+600", want: jwks.DefaultMinCacheAge},
		{name: "fraction", header: "max-age=600.5", want: jwks.DefaultMinCacheAge},
		{name: "empty value", header: "max-age=", want: jwks.DefaultMinCacheAge},
		{name: "no value", header: "max-age", want: jwks.DefaultMinCacheAge},
		{name: "s-maxage is for shared caches", header: "s-maxage=600", want: jwks.DefaultCacheAge},
		{name: "unrelated directives", header: "public, immutable", want: jwks.DefaultCacheAge},
		{name: "custom min", header: "max-age=60", min: 5 * time.Minute, want: 5 * time.Minute},
		{name: "custom max", header: "max-age=86400", max: 2 * time.Hour, want: 2 * time.Hour},
		{name: "custom max and no-store", header: "no-store", min: 2 * time.Minute, max: 2 * time.Hour, want: 2 * time.Minute},
		{name: "default age below custom min", header: "", min: 2 * time.Hour, want: 2 * time.Hour},
		{name: "default age above custom max", header: "", max: 30 * time.Minute, want: 30 * time.Minute},
	}
	a, _, _ := remoteKeys(t)
	doc := remoteDoc(t, a)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRemoteServer(t, remoteResponse{Body: doc, CacheControl: tt.header})
			events := newRemoteEvents()
			r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, MinCacheAge: tt.min, MaxCacheAge: tt.max, OnFetch: events.hook})
			_, err := r.Keys(t.Context(), a.KeyID)
			require.NoError(t, err)
			assert.Equal(t, tt.want, events.next(t).MaxAge)
			assert.Equal(t, remoteT0.Add(tt.want), r.Stats().Expires)
		})
	}
}

func TestRemoteSizeLimit(t *testing.T) {
	a, b, _ := remoteKeys(t)
	doc := remoteDoc(t, a)
	// padTo pads doc with JSON whitespace to n bytes.
	padTo := func(n int) []byte {
		return append(append([]byte{}, doc...), strings.Repeat(" ", n-len(doc))...)
	}
	tests := []struct {
		name    string
		body    []byte
		parse   jwks.ParseOptions
		wantErr bool
	}{
		{name: "default limit, at it", body: padTo(jwks.DefaultMaxSetBytes)},
		{name: "default limit, one over", body: padTo(jwks.DefaultMaxSetBytes + 1), wantErr: true},
		{name: "default limit, far over", body: padTo(8 << 20), wantErr: true},
		{name: "custom limit, at it", body: padTo(len(doc) + 10), parse: jwks.ParseOptions{MaxBytes: len(doc) + 10}},
		{name: "custom limit, one over", body: padTo(len(doc) + 11), parse: jwks.ParseOptions{MaxBytes: len(doc) + 10}, wantErr: true},
		{name: "key count limit", body: remoteDoc(t, a, b), parse: jwks.ParseOptions{MaxKeys: 1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRemoteServer(t, remoteResponse{Body: tt.body})
			r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, Parse: tt.parse})
			keys, err := r.Keys(t.Context(), a.KeyID)
			if !tt.wantErr {
				require.NoError(t, err)
				requireKeys(t, keys, a)
				return
			}
			requireFetchError(t, err, http.StatusOK)
			requireSetError(t, err, jwks.ErrSetTooLarge)
		})
	}
}

func TestRemoteNon200(t *testing.T) {
	a, _, _ := remoteKeys(t)
	for _, status := range []int{
		http.StatusNoContent,
		http.StatusMovedPermanently, // without Location: not followed
		http.StatusNotModified,
		http.StatusUnauthorized,
		http.StatusForbidden,
		http.StatusNotFound,
		http.StatusTooManyRequests,
		http.StatusInternalServerError,
		http.StatusServiceUnavailable,
	} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			// A valid document with the wrong status is still refused.
			srv := newRemoteServer(t, remoteResponse{Status: status, Body: remoteDoc(t, a)})
			events := newRemoteEvents()
			r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: events.hook})
			keys, err := r.Keys(t.Context(), a.KeyID)
			assert.Nil(t, keys)
			requireFetchError(t, err, status)
			ev := events.next(t)
			assert.Equal(t, status, ev.Status)
			requireFetchError(t, ev.Err, status)
			assert.Equal(t, int64(1), r.Stats().Failures)
		})
	}
}

func TestRemoteFollowsRedirects(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	redirect := httptest.NewServer(http.RedirectHandler(srv.URL, http.StatusFound))
	t.Cleanup(redirect.Close)
	r := newTestRemote(t, jwks.RemoteConfig{URL: redirect.URL, Now: newRemoteClock().Now})
	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
}

func TestRemoteTimeout(t *testing.T) {
	// Over a real connection: the handler never answers, the fetch gives up
	// at Timeout with the context's error kept.
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	release := make(chan struct{})
	srv.setBefore(func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, Timeout: 20 * time.Millisecond, OnFetch: events.hook})

	keys, err := r.Keys(t.Context(), a.KeyID)
	assert.Nil(t, keys)
	requireFetchError(t, err, 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, events.next(t).Err, context.DeadlineExceeded)
}

func TestRemoteTimeoutValue(t *testing.T) {
	// In a synctest bubble time stands still until every goroutine blocks,
	// so the deadline and the moment it fires are exact.
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{name: "zero means DefaultFetchTimeout", want: jwks.DefaultFetchTimeout},
		{name: "custom", timeout: 3 * time.Second, want: 3 * time.Second},
		{name: "longer than the default", timeout: time.Minute, want: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var deadline time.Time
				var blocked time.Duration
				tr := remoteTransport(func(w http.ResponseWriter, r *http.Request) {
					<-r.Context().Done()
					blocked = time.Since(start)
				})
				r := newTestRemote(t, jwks.RemoteConfig{
					URL:     remoteTestURL,
					Client:  &http.Client{Transport: tr},
					Timeout: tt.timeout,
					BearerToken: func(ctx context.Context) (string, error) {
						deadline, _ = ctx.Deadline()
						return "tok", nil
					},
				})
				_, err := r.Keys(t.Context(), "kid")
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.ErrorIs(t, err, jwks.ErrFetch)
				assert.Equal(t, tt.want, deadline.Sub(start))
				assert.Equal(t, tt.want, blocked)
			})
		})
	}
}

func TestRemoteBearerToken(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	var n atomic.Int64
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, BearerToken: func(context.Context) (string, error) {
		return fmt.Sprintf("token-%d", n.Add(1)), nil
	}})

	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	require.NoError(t, r.Refresh(t.Context()))
	require.NoError(t, r.Refresh(t.Context()))
	require.Equal(t, 3, srv.count())
	for i := range 3 {
		// Read again for each request: a projected token rotates.
		assert.Equal(t, fmt.Sprintf("Bearer token-%d", i+1), srv.header(i).Get("Authorization"))
	}
}

func TestRemoteBearerTokenError(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	errToken := errors.New("token file unreadable")
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: events.hook,
		BearerToken: func(context.Context) (string, error) { return "", errToken }})

	keys, err := r.Keys(t.Context(), a.KeyID)
	assert.Nil(t, keys)
	requireFetchError(t, err, 0)
	require.ErrorIs(t, err, errToken)
	assert.Zero(t, srv.count(), "no request without credentials")
	ev := events.next(t)
	assert.Zero(t, ev.Status)
	assert.ErrorIs(t, ev.Err, errToken)
	assert.Equal(t, int64(1), r.Stats().Failures)
}

func TestRemoteRequestHeaders(t *testing.T) {
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	h := srv.header(0)
	assert.Equal(t, "application/jwk-set+json, application/json", h.Get("Accept"))
	assert.Empty(t, h.Values("Authorization"), "no BearerToken, no credentials")
}

func TestRemoteUnauthorized(t *testing.T) {
	// A Kubernetes-like endpoint that demands credentials.
	a, _, _ := remoteKeys(t)
	doc := remoteDoc(t, a)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sa-token" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(doc)
	}))
	t.Cleanup(srv.Close)

	anonymous := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL})
	_, err := anonymous.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, http.StatusUnauthorized)

	authed := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, BearerToken: func(context.Context) (string, error) { return "sa-token", nil }})
	keys, err := authed.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
}

func TestRemoteClient(t *testing.T) {
	a, _, _ := remoteKeys(t)
	doc := remoteDoc(t, a)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)

	// nil Client: a plain client, which does not trust the test CA.
	plain := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL})
	_, err := plain.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, 0)
	var certErr *tls.CertificateVerificationError
	assert.ErrorAs(t, err, &certErr)

	trusting := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Client: srv.Client()})
	keys, err := trusting.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
}

func TestRemoteEventsAndStats(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDocWith(remoteDoc(t, a), remoteOctJWK), CacheControl: "max-age=300"})
	clk := newRemoteClock()
	// Each request takes two seconds of the injected clock.
	srv.setBefore(func(*http.Request) { clk.Advance(2 * time.Second) })
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, OnFetch: events.hook})

	// 1: the first fetch.
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	assert.Equal(t, jwks.FetchEvent{
		URL: srv.URL, Reason: jwks.FetchInitial, Start: remoteT0, Duration: 2 * time.Second,
		Status: http.StatusOK, Keys: 1, Skipped: 1, MaxAge: 300 * time.Second,
	}, events.next(t))
	assert.Equal(t, jwks.RemoteStats{
		Fetches: 1, Keys: 1, LastSuccess: remoteT0,
		Expires: remoteT0.Add(300 * time.Second), // counted from the start of the fetch
	}, r.Stats())

	// 2: an unknown kid, the issuer failing.
	srv.set(remoteResponse{Status: http.StatusServiceUnavailable})
	t1 := clk.Now()
	_, err = r.Keys(t.Context(), b.KeyID)
	requireFetchError(t, err, http.StatusServiceUnavailable)
	ev := events.next(t)
	assert.Equal(t, jwks.FetchUnknownKeyID, ev.Reason)
	assert.Equal(t, t1, ev.Start)
	assert.Equal(t, 2*time.Second, ev.Duration)
	assert.Equal(t, http.StatusServiceUnavailable, ev.Status)
	assert.Zero(t, ev.Keys)
	assert.Zero(t, ev.MaxAge)
	requireFetchError(t, ev.Err, http.StatusServiceUnavailable)
	st := r.Stats()
	assert.Equal(t, int64(2), st.Fetches)
	assert.Equal(t, int64(1), st.Failures)
	assert.Equal(t, 1, st.Keys)
	assert.Equal(t, remoteT0, st.LastSuccess)
	assert.Equal(t, t1, st.LastFailure)
	assert.Equal(t, ev.Err, st.LastError)
	assert.Equal(t, remoteT0.Add(300*time.Second), st.Expires)

	// 3: expiry, the issuer back with two keys.
	srv.set(remoteResponse{Body: remoteDoc(t, a, b)}) // no Cache-Control
	clk.Advance(300 * time.Second)
	t2 := clk.Now()
	_, err = r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	ev = events.wait(t) // a background refresh: the stale key answered at once
	assert.Equal(t, jwks.FetchExpired, ev.Reason)
	assert.Equal(t, 2, ev.Keys)
	assert.Zero(t, ev.Skipped)
	assert.Equal(t, jwks.DefaultCacheAge, ev.MaxAge)
	require.NoError(t, ev.Err)

	// 4: Refresh.
	require.NoError(t, r.Refresh(t.Context()))
	t3 := t2.Add(2 * time.Second)
	ev = events.next(t)
	assert.Equal(t, jwks.FetchRefresh, ev.Reason)
	assert.Equal(t, t3, ev.Start)
	st = r.Stats()
	assert.Equal(t, int64(4), st.Fetches)
	assert.Equal(t, int64(1), st.Failures)
	assert.Equal(t, 2, st.Keys)
	assert.Equal(t, t3, st.LastSuccess)
	assert.Equal(t, t1, st.LastFailure)
	assert.Equal(t, t3.Add(jwks.DefaultCacheAge), st.Expires)
	events.none(t)
}

func TestRemoteOnFetchMayCallRemote(t *testing.T) {
	// A hook that reads Stats or asks for keys must not deadlock.
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	var r *jwks.Remote
	var seen jwks.RemoteStats
	var hookKeys []jwks.Key
	r = newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: func(jwks.FetchEvent) {
		seen = r.Stats()
		hookKeys, _ = r.Keys(context.Background(), a.KeyID)
	}})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	assert.Equal(t, int64(1), seen.Fetches, "the hook sees the fetch in Stats")
	requireKeys(t, hookKeys, a)
}

func TestRemoteRefreshBypassesLimiter(t *testing.T) {
	a, b, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a)})
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, RefetchBurst: 1, OnFetch: events.hook})

	// Refresh before any Keys: fetches at once.
	require.NoError(t, r.Refresh(t.Context()))
	assert.Equal(t, jwks.FetchRefresh, events.next(t).Reason)
	// Freshness does not stop it either.
	for i := range 3 {
		require.NoError(t, r.Refresh(t.Context()))
		assert.Equal(t, 2+i, srv.count())
	}
	// Refresh took no token: one unknown-kid fetch is allowed, then none.
	_, err := r.Keys(t.Context(), "x")
	require.NoError(t, err)
	assert.Equal(t, 5, srv.count())
	_, err = r.Keys(t.Context(), "y")
	require.ErrorIs(t, err, jwks.ErrRateLimited)
	assert.Equal(t, 5, srv.count())

	// Rate-limited Keys, but Refresh still fetches: a rotation is picked up.
	srv.set(remoteResponse{Body: remoteDoc(t, b)})
	require.NoError(t, r.Refresh(t.Context()))
	keys, err := r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)

	// A failed Refresh reports and keeps the keys.
	srv.set(remoteResponse{Status: http.StatusInternalServerError})
	requireFetchError(t, r.Refresh(t.Context()), http.StatusInternalServerError)
	keys, err = r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)
}

func TestRemoteDefaultRateLimit(t *testing.T) {
	// A config with zeros: DefaultRefetchBurst, then one per
	// DefaultRefetchInterval.
	srv := newRemoteServer(t, remoteResponse{Status: http.StatusInternalServerError})
	clk := newRemoteClock()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now})

	for range jwks.DefaultRefetchBurst + 2 {
		_, err := r.Keys(t.Context(), "kid")
		require.ErrorIs(t, err, jwks.ErrFetch)
	}
	assert.Equal(t, jwks.DefaultRefetchBurst, srv.count())

	clk.Advance(jwks.DefaultRefetchInterval - time.Nanosecond)
	_, _ = r.Keys(t.Context(), "kid")
	assert.Equal(t, jwks.DefaultRefetchBurst, srv.count())
	clk.Advance(time.Nanosecond)
	_, _ = r.Keys(t.Context(), "kid")
	assert.Equal(t, jwks.DefaultRefetchBurst+1, srv.count())
	_, _ = r.Keys(t.Context(), "kid")
	assert.Equal(t, jwks.DefaultRefetchBurst+1, srv.count())
}

func TestRemoteDefaultClock(t *testing.T) {
	// Now nil means time.Now: in a bubble, that is synctest's clock.
	a, _, _ := remoteKeys(t)
	synctest.Test(t, func(t *testing.T) {
		doc := remoteDoc(t, a)
		var requests atomic.Int64
		tr := remoteTransport(func(w http.ResponseWriter, _ *http.Request) {
			requests.Add(1)
			writeRemoteResponse(w, remoteResponse{Body: doc, CacheControl: "max-age=120"})
		})
		r := newTestRemote(t, jwks.RemoteConfig{URL: remoteTestURL, Client: &http.Client{Transport: tr}})
		// The bubble's clock stands still while nothing blocks: the fetch
		// is stamped with exactly this instant.
		start := time.Now()
		_, err := r.Keys(t.Context(), a.KeyID)
		require.NoError(t, err)
		st := r.Stats()
		assert.Equal(t, start, st.LastSuccess)
		assert.Equal(t, start.Add(2*time.Minute), st.Expires)
		assert.Equal(t, int64(1), requests.Load())
	})
}

func TestRemoteSkipsUnsupportedKeys(t *testing.T) {
	a, b, _ := remoteKeys(t)
	doc := remoteDocWith(remoteDoc(t, a), remoteOctJWK, remoteSecp256k1JWK, remoteEd448JWK,
		`{"kty":"RSA","kid":"enc-1","use":"enc","n":"AQAB","e":"AQAB"}`)
	bJWK, err := jwks.MarshalJWK(b)
	require.NoError(t, err)
	doc = remoteDocWith(doc, string(bJWK))
	srv := newRemoteServer(t, remoteResponse{Body: doc})
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now, OnFetch: events.hook})

	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	ev := events.next(t)
	assert.Equal(t, 2, ev.Keys)
	assert.Equal(t, 4, ev.Skipped)
	require.NoError(t, ev.Err)

	keys, err = r.Keys(t.Context(), b.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, b)
	keys, err = r.Keys(t.Context(), "")
	require.NoError(t, err)
	requireKeys(t, keys, a, b)
	assert.Equal(t, 2, r.Stats().Keys)

	// A skipped key's kid is unknown.
	keys, err = r.Keys(t.Context(), "oct-1")
	require.NoError(t, err)
	assert.Empty(t, keys)
}

func TestRemoteKeysSlicesAreIndependent(t *testing.T) {
	// Appending to a result must not write into storage other callers read.
	a, b, c := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a, b, c)})
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: newRemoteClock().Now})

	for _, kid := range []string{"", a.KeyID} {
		first, err := r.Keys(t.Context(), kid)
		require.NoError(t, err)
		n := len(first)
		x := append(first, jwks.Key{KeyID: "x"})
		second, err := r.Keys(t.Context(), kid)
		require.NoError(t, err)
		y := append(second, jwks.Key{KeyID: "y"})
		assert.Equal(t, "x", x[n].KeyID, "kid %q: appends share storage", kid)
		assert.Equal(t, "y", y[n].KeyID)
	}
}

func TestRemoteConcurrentUse(t *testing.T) {
	a, b, c := remoteKeys(t)
	docs := [][]byte{remoteDoc(t, a, b), remoteDoc(t, b, c), remoteDoc(t, c, a)}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := served.Add(1)
		if n%5 == 0 {
			http.Error(w, "flaky", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Cache-Control", "max-age=60")
		_, _ = w.Write(docs[n%3])
	}))
	t.Cleanup(srv.Close)
	clk := newRemoteClock()
	var events atomic.Int64
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, RefetchInterval: time.Second, RefetchBurst: 5,
		OnFetch: func(jwks.FetchEvent) { events.Add(1) }})

	kids := []string{a.KeyID, b.KeyID, c.KeyID, "", "unknown"}
	const goroutines, calls = 32, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				switch {
				case g == 0 && i%10 == 0:
					clk.Advance(time.Second)
				case g == 1 && i%50 == 0:
					if err := r.Refresh(t.Context()); err != nil {
						assert.ErrorIs(t, err, jwks.ErrFetch)
					}
				case g == 2:
					st := r.Stats()
					assert.LessOrEqual(t, st.Failures, st.Fetches)
				}
				kid := kids[(g+i)%len(kids)]
				keys, err := r.Keys(t.Context(), kid)
				if err != nil {
					var fe *jwks.FetchError
					assert.ErrorAs(t, err, &fe)
					continue
				}
				for _, k := range keys {
					if kid != "" {
						assert.Equal(t, kid, k.KeyID)
					}
				}
			}
		})
	}
	wg.Wait()
	st := r.Stats()
	assert.Equal(t, served.Load(), st.Fetches)
	assert.Equal(t, st.Fetches, events.Load())
	assert.Positive(t, st.Keys)
}

// FuzzRemoteCacheControl sends arbitrary Cache-Control headers and bounds:
// the fetch always succeeds and the freshness granted stays within
// [MinCacheAge, MaxCacheAge], the minimum for a bare no-store or no-cache.
func FuzzRemoteCacheControl(f *testing.F) {
	for _, h := range []string{
		"", "public, max-age=3600", "max-age=0", "max-age=99999999999999999999", "no-store",
		"no-cache", `no-cache="set-cookie"`, "max-age=600, no-cache", `max-age="600"`, "MAX-AGE=60",
		"max-age=-1", "max-age=+5", "max-age=1e9", "max-age", "max-age=,", ",,,", "s-maxage=5",
		"max-age=\x00", "max-age=5, max-age=500000",
	} {
		f.Add(h, uint32(60), uint32(86400))
	}
	f.Add("max-age=30", uint32(1), uint32(1))
	f.Add("max-age=30", uint32(0), uint32(0))
	a, _, _ := remoteKeys(f)
	doc := remoteDoc(f, a)
	f.Fuzz(func(t *testing.T, header string, minSec, maxSec uint32) {
		if minSec > maxSec {
			minSec, maxSec = maxSec, minSec
		}
		minAge, maxAge := time.Duration(minSec)*time.Second, time.Duration(maxSec)*time.Second
		effMin, effMax := cmp.Or(minAge, jwks.DefaultMinCacheAge), cmp.Or(maxAge, jwks.DefaultMaxCacheAge)
		if effMin > effMax {
			t.Skip("NewRemote refuses the bounds")
		}
		tr := remoteTransport(func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Cache-Control"] = []string{header} // as received, unvalidated
			_, _ = w.Write(doc)
		})
		var ev jwks.FetchEvent
		r := newTestRemote(t, jwks.RemoteConfig{
			URL: remoteTestURL, Client: &http.Client{Transport: tr}, Now: newRemoteClock().Now,
			MinCacheAge: minAge, MaxCacheAge: maxAge, OnFetch: func(e jwks.FetchEvent) { ev = e },
		})
		minAge, maxAge = effMin, effMax
		_, err := r.Keys(t.Context(), a.KeyID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, ev.MaxAge, minAge, "header %q", header)
		require.LessOrEqual(t, ev.MaxAge, maxAge, "header %q", header)
		require.Equal(t, remoteT0.Add(ev.MaxAge), r.Stats().Expires)
		for _, d := range strings.Split(header, ",") {
			if d := strings.ToLower(strings.TrimSpace(d)); d == "no-store" || d == "no-cache" {
				require.Equal(t, minAge, ev.MaxAge, "header %q", header)
			}
		}
	})
}

// TestRemoteMaxStale: while every refresh fails, held keys answer for
// MaxStale past their freshness, then no more.
func TestRemoteMaxStale(t *testing.T) {
	assert.Equal(t, 24*time.Hour, jwks.DefaultMaxStale)
	a, _, _ := remoteKeys(t)
	srv := newRemoteServer(t, remoteResponse{Body: remoteDoc(t, a), CacheControl: "max-age=300"})
	clk := newRemoteClock()
	events := newRemoteEvents()
	r := newTestRemote(t, jwks.RemoteConfig{URL: srv.URL, Now: clk.Now, OnFetch: events.hook, MaxStale: time.Hour})
	_, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	events.next(t)

	srv.set(remoteResponse{Status: http.StatusInternalServerError})
	clk.Advance(300*time.Second + time.Hour - time.Second) // stale, within MaxStale
	keys, err := r.Keys(t.Context(), a.KeyID)
	require.NoError(t, err)
	requireKeys(t, keys, a)
	events.wait(t) // the background refresh fails

	clk.Advance(time.Second) // MaxStale reached
	_, err = r.Keys(t.Context(), a.KeyID)
	requireFetchError(t, err, http.StatusInternalServerError)

	_, err = jwks.NewRemote(jwks.RemoteConfig{URL: remoteTestURL, MaxStale: -1})
	require.Error(t, err)
}
