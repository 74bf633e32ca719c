package tokens

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"
)

// Defaults of CacheConfig.
const (
	// DefaultCacheTTL is kube-apiserver's TokenSuccessCacheTTL.
	DefaultCacheTTL = 10 * time.Second
	// DefaultCacheEntries bounds the cache when MaxEntries is zero.
	DefaultCacheEntries = 4096
)

// CacheConfig turns on a cache of successful validations, like
// kube-apiserver's token success cache: failures are never cached, an entry
// lives for TTL but never past the token's own exp, and a hit skips the
// signature and object checks (so a pod deleted within the TTL is noticed
// up to TTL late, as in Kubernetes). Stale-token reports are recomputed on
// every hit. Entries are keyed by the SHA-256 of the token and the
// requested audiences.
type CacheConfig struct {
	// TTL is how long a success is remembered; zero means DefaultCacheTTL.
	TTL time.Duration
	// MaxEntries bounds the cache; zero means DefaultCacheEntries.
	MaxEntries int
}

type cacheKey struct {
	token [sha256.Size]byte
	auds  string
}

type cacheEntry struct {
	res     *Result
	expires time.Time
}

type resultCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[cacheKey]cacheEntry
}

func newResultCache(cfg CacheConfig) (*resultCache, error) {
	if cfg.TTL < 0 || cfg.MaxEntries < 0 {
		return nil, configError("CacheConfig", "has a negative TTL or MaxEntries", nil)
	}
	c := &resultCache{ttl: cfg.TTL, max: cfg.MaxEntries, entries: make(map[cacheKey]cacheEntry)}
	if c.ttl == 0 {
		c.ttl = DefaultCacheTTL
	}
	if c.max == 0 {
		c.max = DefaultCacheEntries
	}
	return c, nil
}

func makeCacheKey(token string, auds []string) cacheKey {
	k := cacheKey{token: sha256.Sum256([]byte(token))}
	n := 0
	for _, a := range auds {
		n += len(a) + 1
	}
	b := make([]byte, 0, n+binary.MaxVarintLen64*len(auds))
	for _, a := range auds {
		// Each audience prefixed with its full length: no two lists share
		// a key, whatever their contents.
		b = binary.AppendUvarint(b, uint64(len(a)))
		b = append(b, a...)
	}
	k.auds = string(b)
	return k
}

// get returns a copy of a live entry.
func (c *resultCache) get(token string, auds []string, now time.Time) (*Result, bool) {
	k := makeCacheKey(token, auds)
	c.mu.Lock()
	e, ok := c.entries[k]
	if ok && !now.Before(e.expires) {
		delete(c.entries, k)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	res := *e.res
	return &res, true
}

func (c *resultCache) put(token string, auds []string, now time.Time, res *Result) {
	expires := now.Add(c.ttl)
	if exp := res.Claims.Expiry; !exp.IsZero() && exp.Before(expires) {
		expires = exp
	}
	if !now.Before(expires) {
		return
	}
	k := makeCacheKey(token, auds)
	stored := *res
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for key, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, key)
			}
		}
		// Still full: drop arbitrary entries (map order is random).
		for key := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, key)
		}
	}
	c.entries[k] = cacheEntry{res: &stored, expires: expires}
}

// Len returns the number of cached entries (for tests and metrics).
func (c *resultCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
