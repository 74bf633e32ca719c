package jwks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/httpget"
)

// Defaults of RemoteConfig.
const (
	// DefaultFetchTimeout bounds one key set request.
	DefaultFetchTimeout = 10 * time.Second
	// DefaultRefetchInterval and DefaultRefetchBurst rate-limit fetches:
	// a burst of three, then one every ten seconds, however many tokens
	// with unknown key IDs arrive and however often the issuer fails.
	DefaultRefetchInterval = 10 * time.Second
	DefaultRefetchBurst    = 3
	// DefaultCacheAge is how long a key set is fresh when the response has
	// no Cache-Control max-age (Kubernetes sends max-age=3600).
	DefaultCacheAge = time.Hour
	// DefaultMinCacheAge and DefaultMaxCacheAge bound the max-age an issuer
	// may ask for.
	DefaultMinCacheAge = time.Minute
	DefaultMaxCacheAge = 24 * time.Hour
	// DefaultMaxStale is how long past their freshness held keys keep
	// answering while refreshes fail: a day. After that a key the issuer
	// may have withdrawn is no longer trusted.
	DefaultMaxStale = 24 * time.Hour
)

// ErrFetch matches every failure to fetch or read a remote key set.
var ErrFetch = errs.New(prefix, "fetching key set failed")

// FetchError reports a failed key set fetch. It matches [ErrFetch] and wraps
// the cause (a context error, a transport error, a document refused with
// [ErrMalformedSet], [ErrSetTooLarge] or [ErrNoKeys]).
type FetchError struct {
	URL string
	// Status is the HTTP status, or 0 if no response arrived.
	Status int
	Reason string
	Err    error
}

func (e *FetchError) Error() string {
	return httpget.Describe(prefix, "fetching", e.URL, e.Reason, e.Err)
}

// Is reports whether target is [ErrFetch].
func (e *FetchError) Is(target error) bool { return target == ErrFetch }

// Unwrap returns the cause.
func (e *FetchError) Unwrap() error { return e.Err }

// FetchReason says why a remote key set was fetched.
type FetchReason string

// The reasons for a fetch.
const (
	FetchInitial      FetchReason = "initial"
	FetchExpired      FetchReason = "expired"
	FetchUnknownKeyID FetchReason = "unknown-kid"
	FetchRefresh      FetchReason = "refresh"
)

// FetchEvent describes one completed fetch, for observability hooks.
type FetchEvent struct {
	URL      string
	Reason   FetchReason
	Start    time.Time
	Duration time.Duration
	// Status is the HTTP status, or 0 if no response arrived.
	Status int
	// Keys and Skipped count the usable and skipped keys of a successful
	// fetch.
	Keys, Skipped int
	// MaxAge is the freshness granted (after the min/max bounds).
	MaxAge time.Duration
	// Err is nil on success.
	Err error
}

// RemoteStats is a snapshot of a remote key set's state.
type RemoteStats struct {
	Fetches, Failures int64
	// Keys is the number of keys held now.
	Keys int
	// LastSuccess and LastFailure are zero until the first of each.
	LastSuccess, LastFailure time.Time
	LastError                error
	// Expires is when the held keys stop being fresh.
	Expires time.Time
}

// RemoteConfig configures a [Remote] key set. Only URL is required; every
// other zero value applies a documented default.
type RemoteConfig struct {
	// URL is the JWKS address (an OIDC discovery document's jwks_uri).
	URL string
	// Client sends the requests; nil means a new http.Client with no
	// timeout of its own (Timeout bounds each fetch).
	Client *http.Client
	// BearerToken, when set, is called before each request and its result
	// sent as "Authorization: Bearer ...": Kubernetes serves its JWKS to
	// authenticated callers only by default. Read a rotating projected token
	// here rather than once.
	BearerToken func(ctx context.Context) (string, error)
	// Timeout bounds each fetch; zero means DefaultFetchTimeout.
	Timeout time.Duration
	// Parse bounds the document (size, key count); zero values apply
	// ParseSet's defaults.
	Parse ParseOptions
	// RefetchInterval and RefetchBurst rate-limit fetches, whatever
	// triggers them: zero means DefaultRefetchInterval and
	// DefaultRefetchBurst.
	RefetchInterval time.Duration
	RefetchBurst    int
	// MinCacheAge and MaxCacheAge bound the freshness a response's
	// Cache-Control max-age grants; DefaultCacheAge applies without one.
	// Zero means DefaultMinCacheAge and DefaultMaxCacheAge.
	MinCacheAge, MaxCacheAge time.Duration
	// MaxStale is how long past freshness the held keys keep answering
	// while every refresh fails; zero means DefaultMaxStale.
	MaxStale time.Duration
	// InsecureAllowHTTP accepts an http:// URL. Never set it outside tests.
	InsecureAllowHTTP bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnFetch, when set, is called after every fetch, success or failure,
	// once Stats include it and before the callers waiting on the fetch
	// return. It must not block; it may run concurrently with itself.
	OnFetch func(FetchEvent)
}

// Remote is a [KeySource] backed by a JWKS URL: keys are fetched on first
// use, kept while fresh (Cache-Control max-age within bounds), and fetched
// again when a token names an unknown key ID or the set goes stale. A stale
// set still answers the key IDs it knows at once while it is refreshed in the
// background, for at most MaxStale: past that, only a successful fetch
// brings keys back. A bad signature under a known key ID triggers no fetch: a
// forged token cannot make the issuer's keys be fetched. Fetches are
// rate-limited, merged (concurrent callers share one request), bounded in
// time and size, and do not drop the keys already held: after a failed
// fetch the previous keys keep working (within MaxStale), and a first failure is retried by the next
// call once the rate limit allows. Unusable keys in the document are skipped
// one by one (see [ParseSet]); a document with no usable key at all counts as
// a failed fetch.
//
// A fetch runs with the values of the context of the call that started it,
// but not its cancellation: a caller that gives up gets its context's error,
// while callers waiting on the same fetch are not cut short. Remote is safe
// for concurrent use.
type Remote struct {
	cfg     RemoteConfig
	client  *http.Client
	now     func() time.Time
	current atomic.Pointer[remoteKeys]

	mu       sync.Mutex
	inflight *fetchCall
	limiter  tokenBucket
	stats    RemoteStats
}

type remoteKeys struct {
	set     *StaticSource
	expires time.Time
}

type fetchCall struct {
	done chan struct{}
	keys *remoteKeys
	err  error
}

// NewRemote checks the config and returns a Remote; a config it refuses is
// a *ksa.ConfigError. Nothing is fetched until the first call to Keys.
func NewRemote(cfg RemoteConfig) (*Remote, error) {
	if cfg.URL == "" {
		return nil, &ksa.ConfigError{Field: "jwks.RemoteConfig.URL", Reason: "is required"}
	}
	u, err := url.Parse(cfg.URL)
	switch {
	case err != nil || u.Host == "":
		return nil, &ksa.ConfigError{Field: "jwks.RemoteConfig.URL", Reason: fmt.Sprintf("%q is not an absolute URL", cfg.URL), Err: err}
	case strings.EqualFold(u.Scheme, "https"):
	case strings.EqualFold(u.Scheme, "http") && cfg.InsecureAllowHTTP:
	default:
		return nil, &ksa.ConfigError{Field: "jwks.RemoteConfig.URL", Reason: fmt.Sprintf("%q is not https (InsecureAllowHTTP allows http in tests)", cfg.URL)}
	}
	if cfg.Timeout < 0 || cfg.RefetchInterval < 0 || cfg.RefetchBurst < 0 || cfg.MinCacheAge < 0 || cfg.MaxCacheAge < 0 || cfg.MaxStale < 0 {
		return nil, &ksa.ConfigError{Field: "jwks.RemoteConfig", Reason: "has a negative duration or count"}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultFetchTimeout
	}
	if cfg.RefetchInterval == 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	if cfg.RefetchBurst == 0 {
		cfg.RefetchBurst = DefaultRefetchBurst
	}
	if cfg.MinCacheAge == 0 {
		cfg.MinCacheAge = DefaultMinCacheAge
	}
	if cfg.MaxCacheAge == 0 {
		cfg.MaxCacheAge = DefaultMaxCacheAge
	}
	if cfg.MaxStale == 0 {
		cfg.MaxStale = DefaultMaxStale
	}
	if cfg.MinCacheAge > cfg.MaxCacheAge {
		return nil, &ksa.ConfigError{Field: "jwks.RemoteConfig.MinCacheAge", Reason: "is above MaxCacheAge"}
	}
	r := &Remote{cfg: cfg, client: cfg.Client, now: cfg.Now}
	if r.client == nil {
		r.client = &http.Client{}
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.limiter = tokenBucket{interval: cfg.RefetchInterval, burst: float64(cfg.RefetchBurst), tokens: float64(cfg.RefetchBurst)}
	return r, nil
}

// URL returns the key set's address.
func (r *Remote) URL() string { return r.cfg.URL }

// Keys implements [KeySource]. It answers from the held keys when they are
// fresh and know kid; otherwise it fetches (rate limits permitting) and
// answers from the new keys, or from the old ones if the fetch failed.
// There is an error only when no keys can answer: a *FetchError when no
// keys are held at all, or kid is unknown and the fetch failed; a
// *[RateLimitError] when kid is unknown and the rate limit allows no fetch
// (its Next says when one may happen). A kid still unknown after a
// successful fetch yields no keys and no error.
func (r *Remote) Keys(ctx context.Context, kid string) ([]Key, error) {
	cur := r.current.Load()
	now := r.now()
	var reason FetchReason
	switch {
	case cur == nil:
		reason = FetchInitial
	case !now.Before(cur.expires.Add(r.cfg.MaxStale)):
		// Stale for too long: the held keys no longer answer; only a
		// successful fetch brings keys back.
		cur = nil
		reason = FetchExpired
	case !now.Before(cur.expires):
		// Stale: a known kid is answered from the held keys at once while
		// the set is refreshed in the background (rate limits permitting),
		// so a slow or hanging issuer never stalls verification.
		if keys, _ := cur.set.Keys(ctx, kid); len(keys) > 0 {
			r.refreshInBackground(ctx)
			return keys, nil
		}
		reason = FetchExpired
	default:
		keys, _ := cur.set.Keys(ctx, kid)
		if len(keys) > 0 {
			return keys, nil
		}
		reason = FetchUnknownKeyID
	}
	next, err := r.fetch(ctx, reason, false)
	if next == nil {
		next = cur
	}
	if next == nil {
		return nil, err
	}
	keys, _ := next.set.Keys(ctx, kid)
	if len(keys) == 0 && err != nil {
		var limited *RateLimitError
		if errors.As(err, &limited) {
			// The held keys do not know kid, and the set may not be
			// fetched again yet: say so, and when it may.
			limited.KeyID = kid
			return nil, limited
		}
		// The kid may be in the set the issuer failed to serve.
		return nil, err
	}
	return keys, nil
}

// refreshInBackground starts a fetch of a stale set, unless one is under way
// or the rate limit says no, and does not wait for it.
func (r *Remote) refreshInBackground(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight != nil || !r.limiter.allow(r.now()) {
		return
	}
	call := &fetchCall{done: make(chan struct{})}
	r.inflight = call
	go r.run(context.WithoutCancel(ctx), FetchExpired, call)
}

// ErrRateLimited matches a *[RateLimitError]: a fetch the rate limit did
// not allow. With no keys held, Keys returns it inside a *FetchError (it
// then matches [ErrFetch] too); for a key ID the held keys do not know,
// Keys returns it alone, saying when the set may be fetched again.
var ErrRateLimited = errs.New(prefix, "key set fetch rate limited")

// RateLimitError reports a fetch the rate limit did not allow. It matches
// [ErrRateLimited] and wraps the last fetch's failure, if the last fetch
// failed.
type RateLimitError struct {
	// URL is the key set's address.
	URL string
	// KeyID is the key ID the held keys do not know, when Keys was asked
	// for one; empty when no keys are held.
	KeyID string
	// Next is when the rate limit allows the next fetch.
	Next time.Time
	// Last is the last fetch's failure, or nil if it succeeded.
	Last error
}

func (e *RateLimitError) Error() string {
	msg := "rate limited until " + e.Next.UTC().Format(time.RFC3339)
	if e.KeyID != "" {
		msg = fmt.Sprintf("key ID %q unknown; fetching %s again is %s", e.KeyID, e.URL, msg)
	}
	if e.Last != nil {
		// The last failure is a *FetchError of the same URL: say what went
		// wrong without naming the URL twice.
		msg += "; the last fetch failed"
		var fe *FetchError
		if errors.As(e.Last, &fe) {
			if fe.Reason != "" {
				msg += ": " + fe.Reason
			}
			return errs.Msg(prefix, msg, fe.Err)
		}
		return errs.Msg(prefix, msg, e.Last)
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is [ErrRateLimited].
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap returns the last fetch's failure, if any.
func (e *RateLimitError) Unwrap() error { return e.Last }

// Refresh fetches the key set now, bypassing freshness and the rate limit
// (a merged fetch already under way is joined instead).
func (r *Remote) Refresh(ctx context.Context) error {
	_, err := r.fetch(ctx, FetchRefresh, true)
	return err
}

// Stats returns a snapshot of the key set's state.
func (r *Remote) Stats() RemoteStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	if cur := r.current.Load(); cur != nil {
		s.Keys = len(cur.set.All())
		s.Expires = cur.expires
	}
	return s
}

// fetch joins or starts a fetch and waits for it within ctx. It returns nil
// keys when no fetch was allowed or it failed.
func (r *Remote) fetch(ctx context.Context, reason FetchReason, force bool) (*remoteKeys, error) {
	if err := ctx.Err(); err != nil {
		return nil, &FetchError{URL: r.cfg.URL, Reason: "gave up waiting for the key set", Err: err}
	}
	r.mu.Lock()
	call := r.inflight
	if call == nil {
		if !force && !r.limiter.allow(r.now()) {
			limited := &RateLimitError{URL: r.cfg.URL, Next: r.limiter.next(), Last: r.stats.LastError}
			r.mu.Unlock()
			return nil, &FetchError{URL: r.cfg.URL, Err: limited}
		}
		call = &fetchCall{done: make(chan struct{})}
		r.inflight = call
		go r.run(context.WithoutCancel(ctx), reason, call)
	}
	r.mu.Unlock()
	select {
	case <-call.done:
		return call.keys, call.err
	case <-ctx.Done():
		return nil, &FetchError{URL: r.cfg.URL, Reason: "gave up waiting for the key set", Err: ctx.Err()}
	}
}

func (r *Remote) run(ctx context.Context, reason FetchReason, call *fetchCall) {
	start := r.now()
	ev := FetchEvent{URL: r.cfg.URL, Reason: reason, Start: start}
	keys, err := r.get(ctx, &ev, start)
	ev.Duration = r.now().Sub(start)
	ev.Err = err

	r.mu.Lock()
	r.stats.Fetches++
	if err != nil {
		r.stats.Failures++
		r.stats.LastFailure = start
		r.stats.LastError = err
	} else {
		r.stats.LastSuccess = start
		r.current.Store(keys)
	}
	call.keys, call.err = keys, err
	r.inflight = nil
	r.mu.Unlock()
	// The hook runs before the waiters are released, so that a caller
	// whose Keys or Refresh returned sees the event recorded. inflight is
	// already cleared: a hook calling Keys or Refresh starts a new fetch
	// rather than waiting on this one forever.
	if r.cfg.OnFetch != nil {
		r.cfg.OnFetch(ev)
	}
	close(call.done)
}

// get performs one request and parses the response.
func (r *Remote) get(ctx context.Context, ev *FetchEvent, start time.Time) (*remoteKeys, error) {
	fail := func(status int, reason string, err error) (*remoteKeys, error) {
		return nil, &FetchError{URL: r.cfg.URL, Status: status, Reason: reason, Err: err}
	}
	limit := r.cfg.Parse.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxSetBytes
	}
	resp, failure := httpget.Do(ctx, httpget.Request{
		URL: r.cfg.URL, Client: r.client, Accept: "application/jwk-set+json, application/json",
		Bearer: r.cfg.BearerToken, Timeout: r.cfg.Timeout, MaxBytes: limit, AllowHTTP: r.cfg.InsecureAllowHTTP,
	})
	if failure != nil {
		ev.Status = failure.Status
		var tooLarge *httpget.TooLargeError
		if errors.As(failure.Err, &tooLarge) {
			failure.Err = errs.Wrap(prefix, ErrSetTooLarge, fmt.Sprintf("document over the %d-byte limit", limit), nil)
		}
		return fail(failure.Status, failure.Reason, failure.Err)
	}
	ev.Status = resp.Status
	body := resp.Body
	set, err := ParseSet(body, r.cfg.Parse)
	if err != nil {
		return fail(resp.Status, "bad key set", err)
	}
	ev.Keys, ev.Skipped = len(set.Keys), len(set.Skipped)
	if len(set.Keys) == 0 {
		skipped := make([]error, len(set.Skipped))
		for i, s := range set.Skipped {
			skipped[i] = s
		}
		return fail(resp.Status, "", errs.Wrap(prefix, ErrNoKeys, fmt.Sprintf("no usable key (%d skipped)", len(set.Skipped)), errs.Join("", "", skipped)))
	}
	src := newStaticSource(set.Keys)
	ev.MaxAge = r.cacheAge(resp.Header.Get("Cache-Control"))
	return &remoteKeys{set: src, expires: start.Add(ev.MaxAge)}, nil
}

// cacheAge reads max-age from Cache-Control and bounds it; no-store and
// no-cache mean the minimum, wherever they stand in the header. A max-age
// that is not delta-seconds (RFC 9111 §1.2.2: digits only, optionally
// quoted) is ignored; one too large for int64 means the maximum.
func (r *Remote) cacheAge(header string) time.Duration {
	age := DefaultCacheAge
	for _, d := range strings.Split(header, ",") {
		name, value, hasValue := strings.Cut(strings.ToLower(strings.TrimSpace(d)), "=")
		switch strings.TrimSpace(name) {
		case "no-store":
			return r.cfg.MinCacheAge
		case "no-cache":
			// A qualified no-cache="field" covers only the named fields
			// (RFC 9111 §5.2.2.4), not the body.
			if !hasValue {
				return r.cfg.MinCacheAge
			}
		case "max-age":
			value = strings.Trim(strings.TrimSpace(value), `"`)
			if value == "" || strings.Trim(value, "0123456789") != "" {
				// An invalid max-age means stale (RFC 9111 §4.2.1).
				age = r.cfg.MinCacheAge
				continue
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n > int64(r.cfg.MaxCacheAge/time.Second) {
				age = r.cfg.MaxCacheAge // only ErrRange is possible here
			} else {
				age = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(age, r.cfg.MinCacheAge), r.cfg.MaxCacheAge)
}

// tokenBucket is a rate limiter driven by an injected clock.
type tokenBucket struct {
	interval time.Duration
	burst    float64
	tokens   float64
	last     time.Time
}

// next returns when allow will next succeed (after it refused).
func (b *tokenBucket) next() time.Time {
	need := 1 - b.tokens
	if need <= 0 {
		return b.last
	}
	return b.last.Add(time.Duration(math.Ceil(need * float64(b.interval))))
}

func (b *tokenBucket) allow(now time.Time) bool {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+float64(now.Sub(b.last))/float64(b.interval))
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
