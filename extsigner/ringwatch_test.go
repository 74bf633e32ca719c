package extsigner_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/keystore"
)

// watched is a watcher of a test and what its hooks saw.
type watched struct {
	w *extsigner.RingFileWatcher

	mu      sync.Mutex
	reloads []extsigner.RingReload
	checks  []time.Time
}

func (r *watched) reload(rl extsigner.RingReload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reloads = append(r.reloads, rl)
}

func (r *watched) check(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, at)
}

// refusals returns the reloads refused and, of them, those not repeated.
func (r *watched) refusals() (all, reported int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range r.reloads {
		if rl.Err != nil {
			all++
			if !rl.Repeated {
				reported++
			}
		}
	}
	return all, reported
}

// errPINRefused stands for a key store's PIN refusal in these tests.
var errPINRefused = errors.New("the token refused the PIN")

// watch makes the watcher of the ring file at path, on clk, with cfg's
// other settings.
func watch(t *testing.T, path string, clk *clock, cfg extsigner.RingFileWatcherConfig) *watched {
	t.Helper()
	r := &watched{}
	cfg.Path, cfg.Now, cfg.OnReload, cfg.OnCheck = path, clk.Now, r.reload, r.check
	if cfg.NoRetry == nil {
		cfg.NoRetry = func(err error) bool { return errors.Is(err, errPINRefused) }
	}
	w, err := extsigner.NewRingFileWatcher(t.Context(), cfg)
	require.NoError(t, err)
	r.w = w
	return r
}

func write(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// TestRingFileWatcherCheck: a changed file is applied at once and whole;
// a file refused leaves the ring as it was, is reported as new once per
// error and, unchanged, is not tried again at once; the file turning good
// again is applied. Every check ends in OnCheck.
func TestRingFileWatcherCheck(t *testing.T) {
	dir := t.TempDir()
	ec, rsa := writeKey(t, dir, "ec.key", key("p256")), writeKey(t, dir, "rsa.key", key("rsa2048"))
	path := filepath.Join(dir, "ring.json")
	good := `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"}]}`
	write(t, path, good)
	clk := newClock()
	clk.Set(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	r := watch(t, path, clk, extsigner.RingFileWatcherConfig{})
	ring := r.w.Ring()
	assert.Equal(t, []time.Time{clk.Now()}, r.checks, "the first read is a check")
	assert.True(t, clk.Now().Equal(r.w.LastCheck()), "LastCheck %s", r.w.LastCheck())

	changed, err := r.w.Check(t.Context())
	require.NoError(t, err)
	assert.False(t, changed, "the same file")
	assert.Empty(t, r.reloads)

	withRSA := `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"},{"key":"` + rsa + `"}]}`
	write(t, path, withRSA)
	changed, err = r.w.Check(t.Context())
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Len(t, ring.KeySet().Keys, 2)
	require.Len(t, r.reloads, 1)
	assert.NoError(t, r.reloads[0].Err)
	assert.Len(t, r.reloads[0].Keys, 2)

	for _, bad := range []struct{ name, file, want string }{
		{"not JSON", "keys: [", "not a JSON object"},
		{"the signing key withdrawn", `{"keys":[{"key":"` + rsa + `","primary":"2026-01-01T00:00:00Z"}]}`, "cannot withdraw primary key"},
		{"a missing key", `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"},{"key":"` + filepath.Join(dir, "none.key") + `"}]}`, "keys[1]: cannot open its key"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			before, reported := r.refusals()
			write(t, path, bad.file)
			for range 3 {
				changed, err := r.w.Check(t.Context())
				require.Error(t, err)
				assert.Contains(t, err.Error(), bad.want)
				assert.False(t, changed)
				clk.Advance(time.Second)
			}
			assert.Len(t, ring.KeySet().Keys, 2, "the last good ring")
			all, rep := r.refusals()
			assert.Equal(t, 1, all-before, "tried once: unchanged, it waits for the interval")
			assert.Equal(t, 1, rep-reported, "reported once")
		})
	}

	write(t, path, withRSA)
	changed, err = r.w.Check(t.Context())
	require.NoError(t, err)
	assert.True(t, changed, "back to a good file")
	assert.NoError(t, r.reloads[len(r.reloads)-1].Err)
	assert.Len(t, r.checks, 1+1+1+3*3+1, "every check ends in OnCheck")
}

// countingOpener opens file keys with keystore.Files and counts the opens
// of the other references, which fail with err (nil: they open key).
type countingOpener struct {
	mu    sync.Mutex
	opens int
	err   error
	key   crypto.Signer
}

func (o *countingOpener) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	if !strings.HasPrefix(ref, "pkcs11:") {
		return keystore.Files{}.Open(ctx, ref)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opens++
	if o.err != nil {
		return nil, o.err
	}
	return o.key, nil
}

func (o *countingOpener) set(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.err = err
}

func (o *countingOpener) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.opens
}

// TestRingFileWatcherRetries: a file refused for a NoRetry reason (a PIN
// refused: each failed login counts toward locking the HSM's PIN) is not
// tried again until it or the PIN file changes; one refused for another
// reason is tried again after the interval, then after twice as long each
// time, up to five minutes; a schedule too early is tried again when it
// becomes safe.
func TestRingFileWatcherRetries(t *testing.T) {
	dir := t.TempDir()
	ec := writeKey(t, dir, "ec.key", key("p256"))
	pinFile := filepath.Join(dir, "pin")
	require.NoError(t, os.WriteFile(pinFile, []byte("1234\n"), 0o600))
	path := filepath.Join(dir, "ring.json")
	first := `{"keys":[{"key":"` + ec + `","primary":"2026-01-01T00:00:00Z"}`
	hsmRef := "pkcs11:token=ksa;object=sa-2?pin-source=" + pinFile
	withHSM := first + `,{"key":"` + hsmRef + `"}]}`
	const interval = 10 * time.Second
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

	t.Run("PIN refused", func(t *testing.T) {
		write(t, path, first+`]}`)
		clk := newClock()
		clk.Set(start)
		opener := &countingOpener{key: key("rsa2048"), err: fmt.Errorf("%s: %w", hsmRef, errPINRefused)}
		r := watch(t, path, clk, extsigner.RingFileWatcherConfig{Opener: opener, Interval: interval})
		write(t, path, withHSM)
		for range 9 * 6 { // 9 minutes of checks
			_, err := r.w.Check(t.Context())
			require.ErrorIs(t, err, errPINRefused)
			clk.Advance(interval)
		}
		assert.Equal(t, 1, opener.count(), "one login in 9 minutes")
		require.Len(t, r.reloads, 1)
		assert.True(t, r.reloads[0].RetryAt.IsZero(), "not tried again until it changes")

		// The PIN file replaced: tried again, once.
		require.NoError(t, os.WriteFile(pinFile, []byte("4321\n"), 0o600))
		for range 3 {
			_, _ = r.w.Check(t.Context())
			clk.Advance(interval)
		}
		assert.Equal(t, 2, opener.count(), "the PIN file changed")
		// The ring file changed: tried again, once.
		write(t, path, withHSM+"\n")
		for range 3 {
			_, _ = r.w.Check(t.Context())
			clk.Advance(interval)
		}
		assert.Equal(t, 3, opener.count(), "the ring file changed")
		_, reported := r.refusals()
		assert.Equal(t, 1, reported, "the same refusal, reported once")
		// The PIN right at last.
		opener.set(nil)
		require.NoError(t, os.WriteFile(pinFile, []byte("1234\n"), 0o600))
		changed, err := r.w.Check(t.Context())
		require.NoError(t, err)
		assert.True(t, changed)
		assert.Equal(t, 4, opener.count())
		assert.Len(t, r.w.Ring().KeySet().Keys, 2)
		// Applied, the file is read again only for its own changes: a PIN
		// file replaced (the HSM's PIN changed) does not reopen its keys.
		require.NoError(t, os.WriteFile(pinFile, []byte("5678\n"), 0o600))
		changed, err = r.w.Check(t.Context())
		require.NoError(t, err)
		assert.False(t, changed)
		assert.Equal(t, 4, opener.count())
	})

	t.Run("key store failing", func(t *testing.T) {
		write(t, path, first+`]}`)
		clk := newClock()
		clk.Set(start)
		opener := &countingOpener{key: key("rsa2048"), err: fmt.Errorf("%s: the token cannot be opened: %w", hsmRef, keystore.ErrKeyStore)}
		r := watch(t, path, clk, extsigner.RingFileWatcherConfig{Opener: opener, Interval: interval})
		write(t, path, withHSM)
		var tried []time.Duration
		for range 30 * 6 { // 30 minutes of checks
			before := opener.count()
			_, err := r.w.Check(t.Context())
			require.ErrorIs(t, err, keystore.ErrKeyStore)
			if opener.count() > before {
				tried = append(tried, clk.Now().Sub(start))
			}
			clk.Advance(interval)
		}
		s := time.Second
		assert.Equal(t, []time.Duration{0, 10 * s, 30 * s, 70 * s, 150 * s, 310 * s, 610 * s, 910 * s, 1210 * s, 1510 * s}, tried, "10 s, doubling up to 5 minutes")
		assert.Equal(t, start.Add(1510*s+5*time.Minute), r.reloads[len(r.reloads)-1].RetryAt)
		// Back: the next attempt applies it.
		opener.set(nil)
		clk.Advance(5 * time.Minute)
		changed, err := r.w.Check(t.Context())
		require.NoError(t, err)
		assert.True(t, changed)
	})

	t.Run("a schedule too early", func(t *testing.T) {
		write(t, path, first+`]}`)
		clk := newClock()
		clk.Set(start)
		opener := &countingOpener{key: key("rsa2048")}
		r := watch(t, path, clk, extsigner.RingFileWatcherConfig{Opener: opener, Interval: interval})
		// The HSM key is written as published long ago and signs in a
		// minute: the ring publishes it only now, so it may sign in two.
		write(t, path, `{"keys":[{"key":"`+ec+`","primary":"2026-01-01T00:00:00Z","retired":"2026-06-02T00:03:01Z"},`+
			`{"key":"`+hsmRef+`","published":"2026-05-01T00:00:00Z","primary":"2026-06-01T00:01:00Z"}]}`)
		var tried []time.Duration
		for range 3 * 6 {
			before := opener.count()
			_, err := r.w.Check(t.Context())
			require.ErrorIs(t, err, extsigner.ErrTooEarly)
			if opener.count() > before {
				tried = append(tried, clk.Now().Sub(start))
			}
			clk.Advance(interval)
		}
		assert.Equal(t, []time.Duration{0, 2 * time.Minute}, tried, "tried again when it was to become safe")
	})
}

// TestRingFileWatcherBackoff: the wait before an unchanged refused file
// is tried again doubles from the interval up to five minutes, or stays
// at the interval when that is longer.
func TestRingFileWatcherBackoff(t *testing.T) {
	dir := t.TempDir()
	ec := writeKey(t, dir, "ec.key", key("p256"))
	path := filepath.Join(dir, "ring.json")
	m := time.Minute
	for _, tc := range []struct {
		interval time.Duration
		want     []time.Duration // the waits after 1, 2, ... refusals
	}{
		{interval: 10 * time.Second, want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * m, 5 * m}},
		{interval: 4 * m, want: []time.Duration{4 * m, 5 * m, 5 * m}},
		{interval: 10 * m, want: []time.Duration{10 * m, 10 * m}},
	} {
		t.Run(tc.interval.String(), func(t *testing.T) {
			write(t, path, `{"keys":[{"key":"`+ec+`","primary":"2026-01-01T00:00:00Z"}]}`)
			clk := newClock()
			r := watch(t, path, clk, extsigner.RingFileWatcherConfig{Interval: tc.interval, Opener: &countingOpener{err: keystore.ErrKeyStore}})
			write(t, path, `{"keys":[{"key":"`+ec+`","primary":"2026-01-01T00:00:00Z"},{"key":"pkcs11:token=ksa;object=k"}]}`)
			var waits []time.Duration
			for range tc.want {
				_, err := r.w.Check(t.Context())
				require.ErrorIs(t, err, keystore.ErrKeyStore)
				last := r.reloads[len(r.reloads)-1]
				waits = append(waits, last.RetryAt.Sub(clk.Now()))
				clk.Set(last.RetryAt)
			}
			assert.Equal(t, tc.want, waits)
		})
	}
}

// TestRingFileWatcherNotRegular: a ring file that is a FIFO (no writer)
// is refused at once, when the watcher is made and at every check, never
// waited for; the checks go on, and Stalled says when they stop: after
// three intervals without a check, at least a minute.
func TestRingFileWatcherNotRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ring.json")
	write(t, path, `{"keys":[{"key":"`+writeKey(t, dir, "ec.key", key("p256"))+`","primary":"2026-01-01T00:00:00Z"}]}`)
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	clk := newClock()
	clk.Set(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))

	// A bound on the wait, not an expectation: a read that blocks on the
	// FIFO never returns.
	bounded := func(name string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn()
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s blocked on the FIFO", name)
		}
	}
	bounded("starting", func() {
		_, err := extsigner.NewRingFileWatcher(t.Context(), extsigner.RingFileWatcherConfig{Path: fifo, Now: clk.Now})
		var rerr *extsigner.RingFileReadError
		require.ErrorAs(t, err, &rerr)
		assert.True(t, rerr.NotRegular)
		assert.ErrorIs(t, err, extsigner.ErrInvalidRingFile)
		assert.Equal(t, "extsigner: ring file "+fifo+" is not a regular file", err.Error())
	})
	r := watch(t, path, clk, extsigner.RingFileWatcherConfig{})
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(fifo, path))
	clk.Advance(10 * time.Second)
	bounded("checking", func() {
		_, err := r.w.Check(t.Context())
		var rerr *extsigner.RingFileReadError
		require.ErrorAs(t, err, &rerr)
		assert.True(t, rerr.NotRegular)
	})
	assert.Len(t, r.w.Ring().KeySet().Keys, 1, "the last good ring")
	require.Len(t, r.reloads, 1)
	assert.Equal(t, clk.Now().Add(extsigner.DefaultRingCheckInterval), r.reloads[0].RetryAt, "read again at the next check")

	// The check ended: it counts.
	assert.True(t, clk.Now().Equal(r.w.LastCheck()), "LastCheck %s", r.w.LastCheck())
	assert.NoError(t, r.w.Stalled())
	clk.Advance(time.Minute)
	assert.NoError(t, r.w.Stalled(), "a minute (three intervals, at least a minute) without a check")
	clk.Advance(time.Second)
	err := r.w.Stalled()
	require.ErrorIs(t, err, extsigner.ErrRingFileStalled)
	assert.Equal(t, "extsigner: ring file "+path+": no check has ended since 2026-06-01T00:00:10Z, 1m1s ago (checks every 10s)", err.Error())
}

// TestRingFileWatcherStallAfter: Stalled fails after three intervals
// without a completed check, and never sooner than a minute.
func TestRingFileWatcherStallAfter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ring.json")
	write(t, path, `{"keys":[{"key":"`+writeKey(t, dir, "ec.key", key("p256"))+`","primary":"2026-01-01T00:00:00Z"}]}`)
	for _, tc := range []struct {
		interval, want time.Duration
	}{
		{interval: 10 * time.Millisecond, want: time.Minute},
		{interval: 10 * time.Second, want: time.Minute},
		{interval: 20 * time.Second, want: time.Minute},
		{interval: time.Minute, want: 3 * time.Minute},
	} {
		clk := newClock()
		r := watch(t, path, clk, extsigner.RingFileWatcherConfig{Interval: tc.interval})
		clk.Advance(tc.want)
		assert.NoError(t, r.w.Stalled(), "interval %v", tc.interval)
		clk.Advance(time.Nanosecond)
		assert.ErrorIs(t, r.w.Stalled(), extsigner.ErrRingFileStalled, "interval %v", tc.interval)
	}
}

// TestReadRingFile: a ring file is read whole up to MaxRingFileBytes, and
// refused beyond it or when missing, with the system's error.
func TestReadRingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ring.json")
	require.NoError(t, os.WriteFile(path, make([]byte, extsigner.MaxRingFileBytes), 0o600))
	data, err := extsigner.ReadRingFile(path)
	require.NoError(t, err)
	assert.Len(t, data, extsigner.MaxRingFileBytes, "the limit itself")
	require.NoError(t, os.WriteFile(path, make([]byte, extsigner.MaxRingFileBytes+1), 0o600))
	_, err = extsigner.ReadRingFile(path)
	var rerr *extsigner.RingFileReadError
	require.ErrorAs(t, err, &rerr)
	assert.True(t, rerr.TooLarge)
	assert.ErrorIs(t, err, extsigner.ErrInvalidRingFile)
	assert.Equal(t, "extsigner: ring file "+path+" is over the 1048576-byte limit", err.Error())
	_, err = extsigner.ReadRingFile(filepath.Join(dir, "none.json"))
	require.ErrorAs(t, err, &rerr)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, extsigner.ErrInvalidRingFile)
}

// TestNewRingFileWatcherRefused: a watcher needs a path, a non-negative
// interval and a ring file it can read and use.
func TestNewRingFileWatcherRefused(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	write(t, bad, `{"keys":[]}`)
	for _, tc := range []struct {
		name    string
		cfg     extsigner.RingFileWatcherConfig
		wantErr error
	}{
		{name: "no path", wantErr: ksa.ErrInvalidConfig},
		{name: "a negative interval", cfg: extsigner.RingFileWatcherConfig{Path: bad, Interval: -time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "no file", cfg: extsigner.RingFileWatcherConfig{Path: filepath.Join(dir, "none.json")}, wantErr: fs.ErrNotExist},
		{name: "a file refused", cfg: extsigner.RingFileWatcherConfig{Path: bad}, wantErr: extsigner.ErrInvalidRingFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := extsigner.NewRingFileWatcher(t.Context(), tc.cfg)
			require.ErrorIs(t, err, tc.wantErr)
			assert.Nil(t, w)
		})
	}
}
