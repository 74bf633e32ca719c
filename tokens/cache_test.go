package tokens_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// countingStore counts object lookups, to see when the cache answered.
type countingStore struct {
	*objectStore
	mu    sync.Mutex
	calls int
}

func (c *countingStore) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.calls }

func TestResultCache(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: 3600,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)

	now := k8sNow
	clock := func() time.Time { return now }
	store := newObjectStore().add(tokens.KindServiceAccount, "myns", "mysvcacct", "mysvcacct-uid").add(tokens.KindPod, "myns", "p", "pu")
	counter := &countingStore{objectStore: store}
	getter := tokens.ObjectGetterFunc(func(ctx context.Context, kind tokens.ObjectKind, ns, name string) (tokens.LiveObject, error) {
		counter.mu.Lock()
		counter.calls++
		counter.mu.Unlock()
		return store.GetObject(ctx, kind, ns, name)
	})
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
		c.SkipObjectCheck, c.Objects = false, getter
		c.Now = clock
		c.Cache = &tokens.CacheConfig{}
	})

	_, err = v.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	assert.Equal(t, 2, counter.count(), "service account and pod looked up")

	// Within the default TTL the cached success answers, even after the pod
	// is gone (as kube-apiserver's 10 s success cache).
	now = now.Add(9 * time.Second)
	store.remove(tokens.KindPod, "myns", "p")
	res, err := v.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	assert.Equal(t, 2, counter.count())
	assert.Equal(t, testSA, res.Identity.ServiceAccount)

	// Another audience list is another entry.
	_, err = v.ValidateFor(t.Context(), tok.Raw, []string{testAudience, testAudience})
	require.ErrorIs(t, err, tokens.ErrInvalidated)

	// After DefaultCacheTTL the token is checked again and refused; failures
	// are not cached.
	now = now.Add(tokens.DefaultCacheTTL)
	_, err = v.Validate(t.Context(), tok.Raw)
	require.ErrorIs(t, err, tokens.ErrInvalidated)
	calls := counter.count()
	_, err = v.Validate(t.Context(), tok.Raw)
	require.ErrorIs(t, err, tokens.ErrInvalidated)
	assert.Greater(t, counter.count(), calls)
}

// TestResultCacheCappedByExpiry: an entry never outlives the token.
func TestResultCacheCappedByExpiry(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: 600})
	require.NoError(t, err)
	now := k8sNow.Add(600*time.Second - 5*time.Second)
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
		c.Now = func() time.Time { return now }
		c.Leeway = tokens.NoLeeway
		c.Cache = &tokens.CacheConfig{TTL: time.Hour}
	})
	_, err = v.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	now = now.Add(6 * time.Second)
	_, err = v.Validate(t.Context(), tok.Raw)
	require.ErrorIs(t, err, tokens.ErrExpired)
}

// TestResultCacheStaleRecomputed: the stale report follows the clock on hits.
func TestResultCacheStaleRecomputed(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key, func(c *tokens.MinterConfig) { c.ExtendExpiration = true })
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: tokens.WarnOnlyExpirationSeconds,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)
	now := k8sNow.Add(3600 * time.Second)
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
		c.Now = func() time.Time { return now }
		c.Cache = &tokens.CacheConfig{TTL: time.Minute}
	})
	res, err := v.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	assert.Nil(t, res.Stale)
	now = now.Add(30 * time.Second)
	res, err = v.Validate(t.Context(), tok.Raw)
	require.NoError(t, err)
	require.NotNil(t, res.Stale)
	assert.Equal(t, int64(23), res.Stale.SecondsAfter)
}

// TestResultCacheBounded: the cache never holds more than MaxEntries, and
// concurrent use is safe.
func TestResultCacheBounded(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Cache = &tokens.CacheConfig{MaxEntries: 4} })
	var raws []string
	for i := 0; i < 10; i++ {
		tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA})
		require.NoError(t, err)
		raws = append(raws, tok.Raw)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, raw := range raws {
				_, err := v.Validate(t.Context(), raw)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, tokens.CacheLen(v), 4)
}

// TestResultCacheKeyUnambiguous: audience lists that would share a key with
// short length prefixes (an audience of 64 KiB and more) do not.
func TestResultCacheKeyUnambiguous(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	long := strings.Repeat("x", 65534)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, Audiences: []string{"api", long}})
	require.NoError(t, err)
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
		c.Cache = &tokens.CacheConfig{}
		c.MaxTokenBytes = 1 << 20
	})
	_, err = v.ValidateFor(t.Context(), tok.Raw, []string{"api", long})
	require.NoError(t, err)
	forged := "api" + "\xff\xfe" + long
	_, err = v.ValidateFor(t.Context(), tok.Raw, []string{forged})
	require.ErrorIs(t, err, tokens.ErrAudienceMismatch)
}
