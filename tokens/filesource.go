package tokens

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// DefaultExpiryMargin is how long before a cached token's exp a FileSource
// reads the file again even if it has not changed: a minute, well inside the
// 20% of lifetime (at least two minutes) the kubelet leaves between rotating
// a projected token and its expiry.
const DefaultExpiryMargin = time.Minute

// DefaultCheckInterval is how often a FileSource looks at the file (a stat,
// not a read) while its cached token is fresh: once a second. A rotation is
// noticed within it; the previous token stays valid far longer.
const DefaultCheckInterval = time.Second

// ErrTokenFile matches every error of a FileSource: the file is missing,
// unreadable, empty, too large, not a JWT, or holds an expired token. The
// error names the file and also matches the specific cause (fs.ErrNotExist,
// ErrMalformed, ErrExpired, ErrTooLarge).
var ErrTokenFile = errs.New(prefix, "projected token file unusable")

// tokenFileError reports why the projected token file at path cannot be
// used.
func tokenFileError(path, reason string, cause error) error {
	return errs.Wrap(prefix, ErrTokenFile, "token file "+path+": "+reason, errs.PathCause(path, cause))
}

// FileSourceConfig configures a [FileSource].
type FileSourceConfig struct {
	// Path is the projected token file, e.g.
	// /var/run/secrets/azure/tokens/azure-identity-token. Required.
	Path string
	// ExpiryMargin is how long before exp the file is read again even
	// if unchanged; zero means DefaultExpiryMargin.
	ExpiryMargin time.Duration
	// CheckInterval is how often the file is stat'ed while the cached token
	// is fresh; zero means DefaultCheckInterval. A negative value stats on
	// every call.
	CheckInterval time.Duration
	// MaxBytes bounds the file; zero means DefaultMaxTokenBytes.
	MaxBytes int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// FileToken is a token read from a file, with its claims decoded but NOT
// verified: they tell the client when to re-read and what it is about to
// send, not whom to trust.
type FileToken struct {
	Raw    string
	Claims *Claims
}

// FileSource is the client side of a projected service-account token: it
// reads the file the kubelet writes (through its atomic symlink swap) and
// knows when it must be read again: when the file has changed (its size,
// modification time or inode differ; checked with a stat at most every
// CheckInterval, which costs no read) or when the cached token is within
// the expiry margin. It never hands out an expired or torn token: a file that changes
// while it is read is read again, and every token is parsed (strict JWT
// structure, exp required) before it is cached. Surrounding whitespace in
// the file is trimmed. It is safe for concurrent use.
//
// Token fits azidentity's ClientAssertionCredential callback;
// GetIdentityToken is the AWS SDK's stscreds.IdentityTokenRetriever; for
// Google's externalaccount.SubjectTokenSupplier wrap Token in a one-line
// SubjectToken method.
type FileSource struct {
	path     string
	margin   time.Duration
	interval time.Duration
	maxBytes int
	now      func() time.Time

	cur atomic.Pointer[cachedFile]
	mu  sync.Mutex
}

type fileStamp struct {
	size    int64
	modTime time.Time
	ino     uint64
	dev     uint64
}

type cachedFile struct {
	tok   FileToken
	stamp fileStamp
	// checked is when the stamp was last confirmed (Unix nanoseconds).
	checked atomic.Int64
}

// NewFileSource checks the config and returns a FileSource. The file is not
// read until the first call.
func NewFileSource(cfg FileSourceConfig) (*FileSource, error) {
	if cfg.Path == "" {
		return nil, configError("FileSourceConfig.Path", "is required", nil)
	}
	if cfg.ExpiryMargin < 0 || cfg.MaxBytes < 0 {
		return nil, configError("FileSourceConfig", "has a negative ExpiryMargin or MaxBytes", nil)
	}
	s := &FileSource{path: cfg.Path, margin: cfg.ExpiryMargin, interval: cfg.CheckInterval, maxBytes: cfg.MaxBytes, now: cfg.Now}
	if s.margin == 0 {
		s.margin = DefaultExpiryMargin
	}
	if s.interval == 0 {
		s.interval = DefaultCheckInterval
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxTokenBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Path returns the file's path.
func (s *FileSource) Path() string { return s.path }

// Token returns the current token, reading the file only when it changed or
// the cached token is near expiry.
func (s *FileSource) Token(ctx context.Context) (string, error) {
	t, err := s.Current(ctx)
	if err != nil {
		return "", err
	}
	return t.Raw, nil
}

// GetIdentityToken returns the current token as bytes, the shape of the AWS
// SDK's stscreds.IdentityTokenRetriever.
func (s *FileSource) GetIdentityToken() ([]byte, error) {
	t, err := s.Current(context.Background())
	if err != nil {
		return nil, err
	}
	return []byte(t.Raw), nil
}

// Current returns the current token with its (unverified) claims. Callers
// MUST NOT modify the claims.
func (s *FileSource) Current(ctx context.Context) (FileToken, error) {
	if err := ctx.Err(); err != nil {
		return FileToken{}, tokenFileError(s.path, "gave up", err)
	}
	now := s.now()
	cur := s.cur.Load()
	fresh := cur != nil && now.Before(cur.tok.Claims.Expiry.Add(-s.margin))
	if fresh && s.interval > 0 && now.UnixNano()-cur.checked.Load() < int64(s.interval) {
		return cur.tok, nil // fast path: no system call
	}
	st, err := s.stat()
	if err != nil {
		return FileToken{}, err
	}
	if fresh && cur.stamp == st {
		cur.checked.Store(now.UnixNano())
		return cur.tok, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.cur.Load(); cur != nil && cur.stamp == st && now.Before(cur.tok.Claims.Expiry.Add(-s.margin)) {
		return cur.tok, nil // another caller just read it
	}
	next, err := s.read(now)
	if err != nil {
		return FileToken{}, err
	}
	if !now.Before(next.tok.Claims.Expiry) {
		return FileToken{}, tokenFileError(s.path, "not rotated in time by the kubelet",
			&TimeError{Claim: claimExp, Time: next.tok.Claims.Expiry, Now: now})
	}
	s.cur.Store(next)
	return next.tok, nil
}

func (s *FileSource) stat() (fileStamp, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fileStamp{}, tokenFileError(s.path, "cannot stat", err)
	}
	return stampOf(fi), nil
}

// read reads and parses the file, reading again (up to three times) if it
// changed while being read.
func (s *FileSource) read(now time.Time) (*cachedFile, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		data, st, err := s.readOnce()
		if err != nil {
			return nil, err
		}
		after, err := s.stat()
		if err != nil {
			return nil, err
		}
		if after != st || int64(len(data)) != st.size {
			lastErr = tokenFileError(s.path, "the file changed while it was read", nil)
			continue
		}
		tok, err := parseTokenFile(s.path, data)
		if err != nil {
			return nil, err
		}
		c := &cachedFile{tok: tok, stamp: st}
		c.checked.Store(now.UnixNano())
		return c, nil
	}
	return nil, lastErr
}

func (s *FileSource) readOnce() ([]byte, fileStamp, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fileStamp{}, tokenFileError(s.path, "cannot open", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, tokenFileError(s.path, "cannot stat", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(s.maxBytes)+1))
	if err != nil {
		return nil, fileStamp{}, tokenFileError(s.path, "cannot read", err)
	}
	if len(data) > s.maxBytes {
		return nil, fileStamp{}, tokenFileError(s.path, "file too large", tooLarge(int(fi.Size()), s.maxBytes))
	}
	return data, stampOf(fi), nil
}

// parseTokenFile checks that data holds one compact JWT with an exp claim
// and decodes its claims without verifying the signature.
func parseTokenFile(path string, data []byte) (FileToken, error) {
	raw := string(bytes.TrimSpace(data))
	if raw == "" {
		return FileToken{}, tokenFileError(path, "the file is empty", nil)
	}
	bad := func(err error) (FileToken, error) {
		return FileToken{}, tokenFileError(path, "not a JWT", err)
	}
	claims, err := parseUnverified(raw) // the file size bounds it
	if err != nil {
		return bad(err)
	}
	if claims.Expiry.IsZero() {
		return bad(claimError(claimExp, "is missing"))
	}
	return FileToken{Raw: raw, Claims: claims}, nil
}
