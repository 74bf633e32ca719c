package cli

import (
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// signerKeys is the ring "ksa signer serve" serves, and where it came
// from.
type signerKeys struct {
	ring *extsigner.Ring
	// file watches the ring file; nil for a ring of key flags.
	file *ringWatcher
	// from names the source in the start line: the ring file, or "flags".
	from string
}

// keys builds the ring of the flags: the ring file's, or the one-key ring
// of --key and the keys published beside it.
func (f *signerFlags) keys(ctx context.Context, a *app, obs *signerObserver) (*signerKeys, error) {
	opener := a.keyOpener()
	if f.ringFile != "" {
		w := newRingWatcher(f.ringFile, opener, obs, a.now, f.ringInterval)
		data, err := readRingFile(f.ringFile)
		if err != nil {
			return nil, ringFileReadError(f.ringFile, err)
		}
		cfg, err := openRingFile(ctx, data, opener)
		if err != nil {
			return nil, ringFileError(f.ringFile, err)
		}
		cfg.Now, cfg.OnChange = a.now, obs.change
		ring, err := extsigner.NewRing(cfg)
		if err != nil {
			return nil, ringFileError(f.ringFile, err)
		}
		w.ring, w.applied = ring, data
		w.completed()
		return &signerKeys{ring: ring, file: w, from: f.ringFile}, nil
	}
	schedule, err := f.flagSchedule(ctx, a)
	if err != nil {
		return nil, err
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: schedule, MaxTokenLifetime: f.lifetime, Now: a.now, OnChange: obs.change})
	if err != nil {
		return nil, configError(err, flagFor{"RingConfig.MaxTokenLifetime": "--max-token-lifetime",
			"RingConfig.Schedule": "--key, --previous-key or --previous-public-key"}, "ksa signer serve")
	}
	return &signerKeys{ring: ring, from: "flags"}, nil
}

// flagSchedule is the schedule of --key, --previous-key and
// --previous-public-key: the key signs from the start; the others are
// published from the start, verify-only (previous public keys excluded
// from discovery). Its data timestamp is the Unix epoch, the same on every
// replica started with the same flags.
func (f *signerFlags) flagSchedule(ctx context.Context, a *app) ([]extsigner.ScheduledKey, error) {
	signer, err := a.loadSigningKey(ctx, f.primary, "--key")
	if err != nil {
		return nil, err
	}
	if err := forAPIServer(f.primary, signer.Public()); err != nil {
		return nil, err
	}
	schedule := []extsigner.ScheduledKey{{Signer: signer, Primary: time.Unix(0, 0)}}
	add := func(path, flag string, exclude bool) error {
		kf, err := a.loadKeyFile(ctx, path, flag)
		if err != nil {
			return err
		}
		for _, k := range kf.Keys {
			if err := forAPIServer(path, k.Public); err != nil {
				return err
			}
			k.ExcludeFromDiscovery = exclude
			schedule = append(schedule, extsigner.ScheduledKey{Key: k})
		}
		return nil
	}
	for _, p := range f.previous {
		if err := add(p, "--previous-key", false); err != nil {
			return nil, err
		}
	}
	for _, p := range f.previousPublic {
		if err := add(p, "--previous-public-key", true); err != nil {
			return nil, err
		}
	}
	return schedule, nil
}

// openSigningKey opens the key ref of flag with opener, explaining a key
// file that cannot be used.
func openSigningKey(ctx context.Context, opener keystore.Opener, ref, flag string) (crypto.Signer, error) {
	s, err := opener.Open(ctx, ref)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, jwks.ErrNoKeys):
		return nil, fail(nil, "pass the private key file (the one ksa issuer keygen wrote at --out, mode 0600), not the public one", "key file %s holds no private key", ref)
	case errors.Is(err, keystore.ErrKeyFile), errors.Is(err, fs.ErrNotExist), errors.Is(err, jwks.ErrMalformedPEM), errors.Is(err, jwks.ErrUnsupportedKey):
		return nil, keyFileError(ref, err)
	}
	return nil, fail(err, "check the key given with "+flag, "opening the key of %s", flag)
}

// ringFileReadError explains a ring file that cannot be read.
func ringFileReadError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(nil, "check the --ring path", "ring file %s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fail(nil, "run as a user that can read it", "ring file %s is not readable", path)
	case errors.Is(err, errTooLarge):
		return fail(nil, "check the --ring path: a ring file is a few kilobytes", "ring file %s is over the %d-byte limit", path, extsigner.MaxRingFileBytes)
	case errors.Is(err, errNotRegular):
		return fail(nil, "give --ring the path of a regular file (a ConfigMap's file, or one a rename replaces)", "ring file %s is not a regular file", path)
	}
	return fail(err, "check the --ring path", "reading ring file %s", path)
}

// ringFileError explains a ring file the signer cannot start with: its
// content, or the keys it names.
func ringFileError(path string, err error) error {
	var ce *ksa.ConfigError
	switch {
	case errors.Is(err, extsigner.ErrInvalidRingFile), errors.As(err, &ce):
		// A schedule NewRing refuses: the ring file's, in its words.
		msg := strings.Replace(oneLine(libText(err)), "RingConfig.Schedule ", "the ring file ", 1)
		return fail(nil, "correct the ring file (its format: ksa signer serve --help)", "%s: %s", path, msg)
	}
	return fail(nil, "check the keys the ring file names", "%s: %s", path, oneLine(libText(err)))
}

// Retries of a ring file the signer refused, unchanged (see ringWatcher).
const (
	// ringRetryMax caps the wait before a refused ring file is tried
	// again (unless --ring-check-interval is longer).
	ringRetryMax = 5 * time.Minute
	// ringCheckWindows is how many check intervals may pass without a
	// completed check before /readyz fails; ringCheckMinStall the least
	// time.
	ringCheckWindows  = 3
	ringCheckMinStall = time.Minute
)

// ringWatcher reads a ring file again at every interval and updates the
// ring when it changed; a file refused leaves the ring as it was. A
// refused file's identity is its content and the PINs its keys'
// references read (hashed, with a key of the process): it is tried again
// at once when that changed. Unchanged, a file refused because a key store
// refused the PIN (keystore.ErrLoginRefused) is not tried again, since
// every failed login counts toward the token's lockout; one refused for
// another reason is tried again after interval, doubling each time up to
// ringRetryMax, or for a schedule too early when it becomes safe.
type ringWatcher struct {
	path     string
	opener   keystore.Opener
	ring     *extsigner.Ring
	obs      *signerObserver
	now      func() time.Time
	interval time.Duration
	// salt keys the identity's hash, so that a PIN's hash is worth
	// nothing outside the process.
	salt [32]byte

	// applied is the file the ring follows.
	applied []byte
	// failing: the last attempt was refused, with failedMsg, for the file
	// of identity failedID; failures counts the attempts refused in a row
	// for it. retryAt is when it may be tried again (zero: never, until it
	// changes).
	failing   bool
	failedMsg string
	failedID  [sha256.Size]byte
	failedErr error
	failures  int
	retryAt   time.Time
	// lastCheck is when the last check ended (Unix nanoseconds): /readyz
	// reads it.
	lastCheck atomic.Int64
}

// newRingWatcher returns the watcher of the ring file at path.
func newRingWatcher(path string, opener keystore.Opener, obs *signerObserver, now func() time.Time, interval time.Duration) *ringWatcher {
	w := &ringWatcher{path: path, opener: opener, obs: obs, now: now, interval: interval}
	_, _ = rand.Read(w.salt[:])
	return w
}

// identity hashes a ring file's content and the PINs of its keys'
// references (or why they cannot be read), so that a PIN file replaced is
// a change.
func (w *ringWatcher) identity(data []byte) [sha256.Size]byte {
	h := hmac.New(sha256.New, w.salt[:])
	writePart := func(b []byte) {
		_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
		h.Write(b)
	}
	writePart(data)
	f, err := parseRingFile(data)
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
			writePart([]byte("unreadable: " + err.Error()))
			continue
		}
		writePart([]byte("pin: " + pin))
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// openRingFile parses a ring file, YAML or JSON, and opens its keys.
func openRingFile(ctx context.Context, data []byte, opener keystore.Opener) (extsigner.RingConfig, error) {
	f, err := parseRingFile(data)
	if err != nil {
		return extsigner.RingConfig{}, err
	}
	return f.Open(ctx, opener)
}

// parseRingFile parses a ring file, YAML or JSON.
func parseRingFile(data []byte) (*extsigner.RingFile, error) {
	if !isJSON(data) {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%w: not YAML or JSON: %s", extsigner.ErrInvalidRingFile, oneLine(err.Error()))
		}
		data = j
	}
	return extsigner.ParseRingFile(data)
}

// isJSON reports whether data starts, after spaces, with a JSON object.
func isJSON(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
}

// check reads the ring file and, when it changed since the ring took it
// (or was refused before, and may be tried again), updates the ring. It
// reports whether the ring changed, and the error of a file refused.
func (w *ringWatcher) check(ctx context.Context) (bool, error) {
	defer w.completed()
	data, err := readRingFile(w.path)
	if err != nil {
		w.refused(nil, ringFileReadError(w.path, err))
		return false, err
	}
	if !w.failing && bytes.Equal(data, w.applied) {
		return false, nil
	}
	id := w.identity(data)
	if w.failing && id == w.failedID && (w.retryAt.IsZero() || w.now().Before(w.retryAt)) {
		return false, w.failedErr // unchanged: not tried again yet
	}
	cfg, err := openRingFile(ctx, data, w.opener)
	if err == nil {
		err = w.ring.Update(cfg)
	}
	if err != nil {
		w.refused(&id, err)
		return false, err
	}
	w.applied, w.failing, w.failedMsg, w.failedErr, w.failures = data, false, "", nil, 0
	w.obs.log.Info("ring file reloaded", "file", w.path, "primary", w.ring.Primary().KeyID, "keys", describeKeys(w.ring.Keys()))
	w.obs.reload(nil)
	return true, nil
}

// refused records a check that refused the file of identity id (nil: a
// file that could not be read, tried again at every check): logged when
// the error changed, counted, and the next attempt scheduled.
func (w *ringWatcher) refused(id *[sha256.Size]byte, err error) {
	msg := oneLine(libText(err))
	if !w.failing || msg != w.failedMsg {
		w.obs.log.Error("ring file refused: serving the last good ring", "file", w.path, "error", msg)
	}
	w.obs.reload(err)
	w.failing, w.failedMsg, w.failedErr = true, msg, err
	if id == nil {
		w.failedID, w.failures, w.retryAt = [sha256.Size]byte{}, 0, time.Time{}
		return
	}
	if *id != w.failedID {
		w.failures = 0
	}
	w.failedID = *id
	w.failures++
	now := w.now()
	var early *extsigner.RotationError
	switch {
	case errors.Is(err, keystore.ErrLoginRefused):
		w.retryAt = time.Time{}
		w.obs.log.Error("a key store refused the PIN: the ring file is not tried again until it or a PIN file it names changes", "file", w.path)
		return
	case errors.As(err, &early) && errors.Is(err, extsigner.ErrTooEarly) && !early.ReadyAt.IsZero():
		w.retryAt = early.ReadyAt
	default:
		w.retryAt = now.Add(w.backoff())
	}
	if next := now.Add(w.interval); w.retryAt.Before(next) {
		w.retryAt = next
	}
}

// backoff is the wait before the file refused failures times in a row is
// tried again: the interval, doubled at each failure after the first, up
// to ringRetryMax (or the interval, when longer).
func (w *ringWatcher) backoff() time.Duration {
	limit := max(ringRetryMax, w.interval)
	d := w.interval
	for i := 1; i < w.failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// completed notes that a check ended now.
func (w *ringWatcher) completed() {
	now := w.now()
	w.lastCheck.Store(now.UnixNano())
	if w.obs.metrics != nil {
		w.obs.metrics.ObserveRingCheck(now)
	}
}

// lastChecked is when the last check ended.
func (w *ringWatcher) lastChecked() time.Time { return time.Unix(0, w.lastCheck.Load()) }

// stallAfter is how long without a completed check makes the signer
// unready: ringCheckWindows intervals, at least ringCheckMinStall.
func (w *ringWatcher) stallAfter() time.Duration {
	return max(ringCheckWindows*w.interval, ringCheckMinStall)
}

// stalled reports a ring file whose last check ended more than
// stallAfter ago: a check that hangs (a hung network file system).
func (w *ringWatcher) stalled() error {
	last := w.lastChecked()
	if since := w.now().Sub(last); since > w.stallAfter() {
		return fmt.Errorf("ring file %s: no check has ended since %s, %v ago (checks every %v)", w.path, last.UTC().Format(time.RFC3339), since.Truncate(time.Second), w.interval)
	}
	return nil
}

// watch checks the ring file every interval until ctx ends.
func (w *ringWatcher) watch(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = w.check(ctx)
		}
	}
}

// errNotRegular: the ring file is a FIFO, a device, a directory.
var errNotRegular = errors.New("not a regular file")

// readRingFile reads a ring file without ever waiting on it: opened
// non-blocking (a FIFO with no writer would block the open and every read),
// it must be a regular file, and at most extsigner.MaxRingFileBytes are
// read (errTooLarge beyond).
func readRingFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, extsigner.MaxRingFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > extsigner.MaxRingFileBytes {
		return nil, errTooLarge
	}
	return data, nil
}
