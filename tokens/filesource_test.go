package tokens_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// projectedVolume writes tokens the way the kubelet's atomic writer does:
// each version in its own timestamped directory, ..data a symlink to the
// current one, and the file a symlink through ..data, swapped by rename.
type projectedVolume struct {
	t       testing.TB
	dir     string
	version int
}

func newProjectedVolume(t testing.TB) *projectedVolume {
	return &projectedVolume{t: t, dir: t.TempDir()}
}

func (v *projectedVolume) path() string { return filepath.Join(v.dir, "token") }

func (v *projectedVolume) write(content string) {
	v.t.Helper()
	v.version++
	ts := fmt.Sprintf("..2026_11_22_08_00_00.%06d", v.version)
	require.NoError(v.t, os.Mkdir(filepath.Join(v.dir, ts), 0o755))
	require.NoError(v.t, os.WriteFile(filepath.Join(v.dir, ts, "token"), []byte(content), 0o644))
	tmp := filepath.Join(v.dir, "..data_tmp")
	require.NoError(v.t, os.Symlink(ts, tmp))
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	require.NoError(v.t, os.Rename(tmp, filepath.Join(v.dir, "..data")))
	if _, err := os.Lstat(v.path()); err != nil {
		require.NoError(v.t, os.Symlink(filepath.Join("..data", "token"), v.path()))
	}
	if old != "" {
		require.NoError(v.t, os.RemoveAll(filepath.Join(v.dir, old)))
	}
}

// mintFor returns a token minted at `at` living `life`.
func mintFor(t testing.TB, at time.Time, life time.Duration) string {
	t.Helper()
	m := mustMinter(t, testkeys.K8sEC(), func(c *tokens.MinterConfig) { c.Now = fixedClock(at) })
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: int64(life / time.Second)})
	require.NoError(t, err)
	return tok.Raw
}

func newFileSource(t testing.TB, path string, now func() time.Time) *tokens.FileSource {
	t.Helper()
	s, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: path, Now: now})
	require.NoError(t, err)
	return s
}

func TestFileSourceErrors(t *testing.T) {
	now := k8sNow
	tests := []struct {
		name    string
		content *string // nil: no file
		wantErr error
	}{
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "empty", content: ptr(""), wantErr: tokens.ErrTokenFile},
		{name: "whitespace only", content: ptr(" \n"), wantErr: tokens.ErrTokenFile},
		{name: "not a JWT", content: ptr("hello"), wantErr: tokens.ErrMalformed},
		{name: "two parts", content: ptr(b64(`{"alg":"ES256"}`) + "." + b64(`{"exp":1}`)), wantErr: tokens.ErrMalformed},
		{name: "no exp", content: ptr(b64(`{"alg":"ES256"}`) + "." + b64(`{"iss":"x"}`) + ".c2ln"), wantErr: tokens.ErrMissingClaim},
		{name: "expired", content: ptr(mintFor(t, now.Add(-2*time.Hour), time.Hour)), wantErr: tokens.ErrExpired},
		{name: "too large", content: ptr(strings.Repeat("a", tokens.DefaultMaxTokenBytes+1)), wantErr: tokens.ErrTooLarge},
		{name: "at the size limit it is read (and is not a JWT)", content: ptr(strings.Repeat("a", tokens.DefaultMaxTokenBytes)), wantErr: tokens.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "token")
			if tt.content != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tt.content), 0o644))
			}
			_, err := newFileSource(t, path, fixedClock(now)).Token(t.Context())
			require.ErrorIs(t, err, tokens.ErrTokenFile)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), "tokens: token file "+path+": ", "names the file")
		})
	}
	_, err := tokens.NewFileSource(tokens.FileSourceConfig{})
	require.Error(t, err)
	_, err = tokens.NewFileSource(tokens.FileSourceConfig{Path: "x", ExpiryMargin: -1})
	require.Error(t, err)
}

func ptr(s string) *string { return &s }

// TestFileSourceCaches: an unchanged file is not read again. The file is
// rewritten in place with the same size and modification time: a source
// that re-read it would see the difference.
func TestFileSourceCaches(t *testing.T) {
	now := k8sNow
	path := filepath.Join(t.TempDir(), "token")
	first := mintFor(t, now, time.Hour)
	require.NoError(t, os.WriteFile(path, []byte(first+"\n"), 0o644))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	src := newFileSource(t, path, func() time.Time { return now })
	got, err := src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, first, got, "trailing newline trimmed")

	second := mintFor(t, now.Add(time.Second), time.Hour)
	require.Len(t, second, len(first))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(second), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))

	now = now.Add(2 * tokens.DefaultCheckInterval)
	got, err = src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, first, got, "unchanged stat: cached")

	// Within the expiry margin the file is read again.
	now = now.Add(time.Hour - tokens.DefaultExpiryMargin)
	got, err = src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, second, got)

	cur, err := src.Current(t.Context())
	require.NoError(t, err)
	assert.Equal(t, testSA.Username(), cur.Claims.Subject)
	b, err := src.GetIdentityToken()
	require.NoError(t, err)
	assert.Equal(t, second, string(b))
}

// TestFileSourceRotation: the kubelet's symlink swap is noticed at once.
func TestFileSourceRotation(t *testing.T) {
	now := k8sNow
	vol := newProjectedVolume(t)
	one := mintFor(t, now, time.Hour)
	vol.write(one)
	src := newFileSource(t, vol.path(), func() time.Time { return now })
	got, err := src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, one, got)

	two := mintFor(t, now.Add(48*time.Minute), time.Hour)
	vol.write(two)
	got, err = src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, one, got, "within the check interval the cached token is served")

	now = now.Add(tokens.DefaultCheckInterval)
	got, err = src.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, two, got)

	// With a negative interval every call looks at the file.
	eager, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: vol.path(), CheckInterval: -1, Now: func() time.Time { return now }})
	require.NoError(t, err)
	got, err = eager.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, two, got)
	three := mintFor(t, now, time.Hour)
	vol.write(three)
	got, err = eager.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, three, got)
}

// TestFileSourceExpiredWithoutRotation: if the kubelet stops rotating, the
// source refuses the expired token instead of handing it out.
func TestFileSourceExpiredWithoutRotation(t *testing.T) {
	now := k8sNow
	vol := newProjectedVolume(t)
	vol.write(mintFor(t, now, time.Hour))
	src := newFileSource(t, vol.path(), func() time.Time { return now })
	_, err := src.Token(t.Context())
	require.NoError(t, err)
	now = now.Add(59*time.Minute + 30*time.Second) // inside the margin, not yet expired
	_, err = src.Token(t.Context())
	require.NoError(t, err)
	now = now.Add(time.Minute)
	_, err = src.Token(t.Context())
	require.ErrorIs(t, err, tokens.ErrExpired)
	ctx, cancel := contextWithCancel(t)
	cancel()
	_, err = src.Token(ctx)
	require.ErrorIs(t, err, contextCanceled)
}

// TestFileSourceConcurrentRotation: 64 goroutines read while the kubelet
// rotates; every token handed out is complete (one of those written) and
// unexpired at the time it was handed out (run with -race).
func TestFileSourceConcurrentRotation(t *testing.T) {
	var nowNanos atomic.Int64
	nowNanos.Store(k8sNow.UnixNano())
	clock := func() time.Time { return time.Unix(0, nowNanos.Load()) }
	vol := newProjectedVolume(t)
	written := map[string]time.Time{}
	var mu sync.Mutex
	write := func(at time.Time) {
		raw := mintFor(t, at, 10*time.Minute)
		mu.Lock()
		written[raw] = at.Add(10 * time.Minute)
		mu.Unlock()
		vol.write(raw)
	}
	write(k8sNow)
	src := newFileSource(t, vol.path(), clock)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served atomic.Int64
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				at := clock()
				raw, err := src.Token(t.Context())
				if err != nil {
					// Only a read racing a swap may fail, never with a torn token.
					assert.ErrorIs(t, err, tokens.ErrTokenFile)
					continue
				}
				mu.Lock()
				exp, ok := written[raw]
				mu.Unlock()
				if !assert.True(t, ok, "served a token that was never written whole") {
					return
				}
				assert.True(t, at.Before(exp), "served an expired token")
				served.Add(1)
			}
		}()
	}
	// The kubelet rotates at 80% of the lifetime: every 8 minutes.
	for i := 1; i <= 20; i++ {
		at := k8sNow.Add(time.Duration(i) * 8 * time.Minute)
		write(at)
		nowNanos.Store(at.Add(time.Minute).UnixNano())
		for n := served.Load(); served.Load() < n+64; {
			// let readers observe this version
		}
	}
	close(stop)
	wg.Wait()
}

func BenchmarkFileSourceToken(b *testing.B) {
	vol := newProjectedVolume(b)
	vol.write(mintFor(b, k8sNow, time.Hour))
	src := newFileSource(b, vol.path(), fixedClock(k8sNow))
	ctx := b.Context()
	if _, err := src.Token(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Token(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileSourceTokenStat is the path taken at most once per check
// interval: a stat of the projected file, no read.
func BenchmarkFileSourceTokenStat(b *testing.B) {
	vol := newProjectedVolume(b)
	vol.write(mintFor(b, k8sNow, time.Hour))
	src, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: vol.path(), CheckInterval: -1, Now: fixedClock(k8sNow)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	if _, err := src.Token(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Token(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
