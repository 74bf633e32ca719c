package extsigner

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/keystore"
)

// DefaultRingCheckInterval is how often a [RingFileWatcher] reads its ring
// file when RingFileWatcherConfig.Interval is zero.
const DefaultRingCheckInterval = 10 * time.Second

// The waits of a [RingFileWatcher].
const (
	// ringRetryMax caps the wait before a refused, unchanged ring file is
	// tried again (unless the interval is longer).
	ringRetryMax = 5 * time.Minute
	// ringStallWindows is how many intervals may pass without a completed
	// check before Stalled reports it; ringStallMin the least time.
	ringStallWindows = 3
	ringStallMin     = time.Minute
)

// RingFileReadError is a ring file that could not be read ([ReadRingFile],
// a [RingFileWatcher]). It matches [ErrInvalidRingFile] when the file is
// not a regular file or is over MaxRingFileBytes; otherwise it wraps the
// system's error (fs.ErrNotExist, fs.ErrPermission).
type RingFileReadError struct {
	Path string
	// NotRegular: a FIFO, a device, a directory; refused unread, never
	// waited for.
	NotRegular bool
	// TooLarge: over MaxRingFileBytes; refused after MaxRingFileBytes and
	// one more byte were read.
	TooLarge bool
	// Err is the system's error, if any.
	Err error
}

func (e *RingFileReadError) Error() string {
	switch {
	case e.NotRegular:
		return errs.Msg(prefix, "ring file "+e.Path+" is not a regular file", nil)
	case e.TooLarge:
		return errs.Msg(prefix, "ring file "+e.Path+" is over the "+strconv.Itoa(MaxRingFileBytes)+"-byte limit", nil)
	}
	return errs.Msg(prefix, "ring file unreadable", e.Err)
}

// Is reports whether target is ErrInvalidRingFile, for a file not regular
// or too large.
func (e *RingFileReadError) Is(target error) bool {
	return target == ErrInvalidRingFile && (e.NotRegular || e.TooLarge)
}

// Unwrap returns the system's error, if any.
func (e *RingFileReadError) Unwrap() error { return e.Err }

// ReadRingFile reads the ring file at path without ever waiting on it: it
// is opened non-blocking (a FIFO with no writer would block the open and
// every read), must be a regular file, and at most MaxRingFileBytes are
// read. Errors are a *[RingFileReadError].
func ReadRingFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &RingFileReadError{Path: path, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &RingFileReadError{Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &RingFileReadError{Path: path, NotRegular: true}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRingFileBytes+1))
	if err != nil {
		return nil, &RingFileReadError{Path: path, Err: err}
	}
	if len(data) > MaxRingFileBytes {
		return nil, &RingFileReadError{Path: path, TooLarge: true}
	}
	return data, nil
}

// RingFileWatcherConfig configures a [RingFileWatcher]. Path is required;
// the zero value of every other field is ready to use.
type RingFileWatcherConfig struct {
	// Path is the ring file's path.
	Path string
	// Opener opens the ring file's signing keys (see [RingFile.Open]); nil
	// means keystore.Files{}.
	Opener keystore.Opener
	// Parse reads a ring file; nil means [ParseRingFile]. (The ksa command
	// reads YAML too.) The watcher bounds what it is given at
	// MaxRingFileBytes.
	Parse func(data []byte) (*RingFile, error)
	// Interval is how often Watch reads the file; zero means
	// DefaultRingCheckInterval.
	Interval time.Duration
	// Now is the clock of the watcher and of its ring; nil means time.Now.
	Now func() time.Time
	// OnChange is the ring's RingConfig.OnChange.
	OnChange func(RingChange)
	// NoRetry reports a refusal that trying the same file again can only
	// make worse: a key store that refused the PIN, every failed login
	// counting toward locking the token. A file so refused is tried again
	// only when it, or a PIN file its keys' references name, changes. nil:
	// none.
	NoRetry func(error) bool
	// OnReload, when set, is called after each attempt to apply the file
	// (read again and changed, or refused before and tried again). It runs
	// on the goroutine of the check and must be quick.
	OnReload func(RingReload)
	// OnCheck, when set, is called when a check ends, the first (in
	// NewRingFileWatcher) included, with its time: whether the file
	// changed, was applied, refused, or could not be read. It runs on the
	// goroutine of the check and must be quick.
	OnCheck func(time.Time)
}

// RingReload is an attempt of a [RingFileWatcher] to apply its file.
type RingReload struct {
	// Err is nil when the ring follows the file now; otherwise why the
	// file was refused (a *RingFileReadError for one that could not be
	// read), the ring left as it was.
	Err error
	// Repeated: Err says what the previous attempt's said, for a caller
	// that reports each refusal once.
	Repeated bool
	// RetryAt, for a refusal, is when the same file is tried again (the
	// next check for a file that could not be read); zero for a NoRetry
	// refusal, tried again only when the file or a PIN file it names
	// changes.
	RetryAt time.Time
	// Keys are the ring's keys after a reload applied, with their roles.
	Keys []RingKey
}

// RingFileWatcher keeps a ring in step with its ring file: it reads the
// file every interval (never waiting on it, see [ReadRingFile]) and, when
// it changed, opens its keys and updates the ring ([Ring.Update]). A file
// refused leaves the ring as it was; it is read again at every check and
// tried again at once when its identity changed: its content, and the
// PIN of every key reference with a pin-source (hashed with a key of the
// process, so the hash is worth nothing outside it). Unchanged, a file
// refused for a NoRetry reason is not tried again; a schedule too early
// ([ErrTooEarly]) is tried again when it becomes safe; any other refusal
// after the interval, doubling at each refusal in a row up to five
// minutes (or the interval, when longer). [RingFileWatcher.Stalled]
// reports checks that stopped ending (a hung network file system): none
// in three intervals, and at least a minute.
//
// A RingFileWatcher is safe for concurrent use; checks run one at a time.
type RingFileWatcher struct {
	path     string
	opener   keystore.Opener
	parse    func([]byte) (*RingFile, error)
	interval time.Duration
	now      func() time.Time
	noRetry  func(error) bool
	onReload func(RingReload)
	onCheck  func(time.Time)
	ring     *Ring
	// key keys the identity's hash.
	key [32]byte

	mu sync.Mutex // serialises checks
	// applied is the file the ring follows.
	applied []byte
	// failing: the last attempt was refused, with failedErr (its text
	// failedMsg), for the file of identity failedID; failures counts the
	// attempts refused in a row for it. retryAt is when it may be tried
	// again (zero: not until it changes).
	failing   bool
	failedMsg string
	failedID  [sha256.Size]byte
	failedErr error
	failures  int
	retryAt   time.Time
	// lastCheck is when the last check ended (Unix nanoseconds).
	lastCheck atomic.Int64
}

// NewRingFileWatcher reads the ring file, opens its keys and makes its
// ring (RefreshHint, MaxTokenLifetime and MinStaging from the file; Now
// and OnChange from cfg); Watch then keeps the ring in step with the file.
// Errors are a *ksa.ConfigError for cfg, a *[RingFileReadError] for a file
// that cannot be read, or the error of [RingFile.Open] or [NewRing].
func NewRingFileWatcher(ctx context.Context, cfg RingFileWatcherConfig) (*RingFileWatcher, error) {
	switch {
	case cfg.Path == "":
		return nil, &ksa.ConfigError{Field: "extsigner.RingFileWatcherConfig.Path", Reason: "is empty"}
	case cfg.Interval < 0:
		return nil, &ksa.ConfigError{Field: "extsigner.RingFileWatcherConfig.Interval", Reason: fmt.Sprintf("%v is negative", cfg.Interval)}
	}
	w := &RingFileWatcher{path: cfg.Path, opener: cfg.Opener, parse: cfg.Parse, interval: cfg.Interval, now: cfg.Now,
		noRetry: cfg.NoRetry, onReload: cfg.OnReload, onCheck: cfg.OnCheck}
	if w.parse == nil {
		w.parse = ParseRingFile
	}
	if w.interval == 0 {
		w.interval = DefaultRingCheckInterval
	}
	if w.now == nil {
		w.now = time.Now
	}
	_, _ = rand.Read(w.key[:]) // crypto/rand never fails
	data, err := ReadRingFile(w.path)
	if err != nil {
		return nil, err
	}
	rc, err := w.open(ctx, data)
	if err != nil {
		return nil, err
	}
	rc.Now, rc.OnChange = w.now, cfg.OnChange
	if w.ring, err = NewRing(rc); err != nil {
		return nil, err
	}
	w.applied = data
	w.completed()
	return w, nil
}

// Ring returns the ring the watcher keeps in step with the file.
func (w *RingFileWatcher) Ring() *Ring { return w.ring }

// open parses a ring file and opens its keys.
func (w *RingFileWatcher) open(ctx context.Context, data []byte) (RingConfig, error) {
	f, err := w.parse(data)
	if err != nil {
		return RingConfig{}, err
	}
	return f.Open(ctx, w.opener)
}

// Watch checks the file every interval until ctx ends.
func (w *RingFileWatcher) Watch(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = w.Check(ctx)
		}
	}
}

// Check reads the file and, when it changed since the ring took it (or
// was refused before and may be tried again), updates the ring. It
// reports whether the ring changed, and the refusal of the file (the
// last one, for a refused file not tried again yet).
func (w *RingFileWatcher) Check(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.completed()
	data, err := ReadRingFile(w.path)
	if err != nil {
		w.refused(nil, err)
		return false, err
	}
	if !w.failing && bytes.Equal(data, w.applied) {
		return false, nil
	}
	id := w.identity(data)
	if w.failing && id == w.failedID && (w.retryAt.IsZero() || w.now().Before(w.retryAt)) {
		return false, w.failedErr // unchanged: not tried again yet
	}
	cfg, err := w.open(ctx, data)
	if err == nil {
		err = w.ring.Update(cfg)
	}
	if err != nil {
		w.refused(&id, err)
		return false, err
	}
	w.applied, w.failing, w.failedMsg, w.failedErr, w.failures = data, false, "", nil, 0
	if w.onReload != nil {
		w.onReload(RingReload{Keys: w.ring.Keys()})
	}
	return true, nil
}

// identity hashes a ring file's content and the PINs of its keys'
// references (or why they cannot be read), so that a PIN file replaced
// is a change.
func (w *RingFileWatcher) identity(data []byte) [sha256.Size]byte {
	h := hmac.New(sha256.New, w.key[:])
	part := func(b []byte) {
		_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
		h.Write(b)
	}
	part(data)
	f, err := w.parse(data)
	if err != nil {
		return [sha256.Size]byte(h.Sum(nil))
	}
	for _, k := range f.Keys {
		ref, err := keystore.ParseRef(k.Key)
		if err != nil || ref.Scheme() != keystore.SchemePKCS11 || ref.Attr("pin-source") == "" {
			continue
		}
		pin, err := ref.ReadPIN()
		if err != nil {
			part([]byte("unreadable: " + err.Error()))
			continue
		}
		part([]byte("pin: " + pin))
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// refused records an attempt that refused the file of identity id (nil: a
// file that could not be read, tried again at every check), schedules
// the next attempt and reports it.
func (w *RingFileWatcher) refused(id *[sha256.Size]byte, err error) {
	now := w.now()
	msg := err.Error()
	r := RingReload{Err: err, Repeated: w.failing && msg == w.failedMsg}
	w.failing, w.failedMsg, w.failedErr = true, msg, err
	if id == nil {
		w.failedID, w.failures, w.retryAt = [sha256.Size]byte{}, 0, time.Time{}
		r.RetryAt = now.Add(w.interval)
	} else {
		if *id != w.failedID {
			w.failures = 0
		}
		w.failedID = *id
		w.failures++
		w.retryAt = w.retry(err, now)
		r.RetryAt = w.retryAt
	}
	if w.onReload != nil {
		w.onReload(r)
	}
}

// retry returns when a file refused with err at now is tried again: zero
// (not until it changes) for a NoRetry refusal, when it becomes safe for
// a schedule too early, after the back-off otherwise; never before the
// next check.
func (w *RingFileWatcher) retry(err error, now time.Time) time.Time {
	if w.noRetry != nil && w.noRetry(err) {
		return time.Time{}
	}
	at := now.Add(w.backoff())
	var early *RotationError
	if errors.As(err, &early) && errors.Is(err, ErrTooEarly) && !early.ReadyAt.IsZero() {
		at = early.ReadyAt
	}
	return later(at, now.Add(w.interval))
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// backoff is the wait before the file refused failures times in a row is
// tried again: the interval, doubled at each failure after the first, up
// to ringRetryMax (or the interval, when longer).
func (w *RingFileWatcher) backoff() time.Duration {
	limit := max(ringRetryMax, w.interval)
	d := w.interval
	for i := 1; i < w.failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// completed notes that a check ended now.
func (w *RingFileWatcher) completed() {
	now := w.now()
	w.lastCheck.Store(now.UnixNano())
	if w.onCheck != nil {
		w.onCheck(now)
	}
}

// LastCheck returns when the last check of the file ended.
func (w *RingFileWatcher) LastCheck() time.Time { return time.Unix(0, w.lastCheck.Load()) }

// Stalled returns an error matching [ErrRingFileStalled] when no check of
// the file has ended for three intervals, and at least a minute: a check
// that hangs (a hung network file system) stops the reloads.
func (w *RingFileWatcher) Stalled() error {
	last := w.LastCheck()
	if since := w.now().Sub(last); since > max(ringStallWindows*w.interval, ringStallMin) {
		return errs.Wrap(prefix, ErrRingFileStalled, fmt.Sprintf("ring file %s: no check has ended since %s, %v ago (checks every %v)",
			w.path, last.UTC().Format(time.RFC3339), since.Truncate(time.Second), w.interval), nil)
	}
	return nil
}
