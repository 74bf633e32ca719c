package credspec

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ksa-go/ksa"
)

// DefaultCertCheckInterval is how often, by default, a [CertReloader] looks
// at its files again.
const DefaultCertCheckInterval = 10 * time.Second

// CertReloaderConfig configure a [CertReloader]. CertFile and KeyFile are
// required; every other zero value is a safe default.
type CertReloaderConfig struct {
	// CertFile and KeyFile are PEM files, as tls.LoadX509KeyPair reads
	// them (a mounted kubernetes.io/tls Secret's tls.crt and tls.key).
	CertFile, KeyFile string
	// CheckInterval is the least time between two looks at the files,
	// made during a TLS handshake. Zero means
	// [DefaultCertCheckInterval]; negative is an error.
	CheckInterval time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// ReadFile reads a file (following symbolic links, as Secret volumes
	// need). Default os.ReadFile.
	ReadFile func(name string) ([]byte, error)
	// OnReload, if set, is called after every reload attempt triggered by
	// a change, with nil on success or the error (the previous
	// certificate is kept). Called with the reloader's lock held: it must
	// not call the reloader.
	OnReload func(err error)
}

// CertReloader serves a certificate from files and picks up new files
// (cert-manager renewals, rotated Secrets) without a restart: during a
// handshake, at most once per CheckInterval, it reads both files and, when
// either differs from the pair in service, loads the pair again. Contents
// are compared rather than modification times, which a renewal within the
// file system's timestamp granularity would not change. A pair that fails
// to load (say, the certificate written, the key not yet) keeps the
// previous certificate in service until the files change again. Safe for
// concurrent use.
type CertReloader struct {
	opts CertReloaderConfig

	mu        sync.Mutex
	cert      *tls.Certificate
	certPEM   []byte // the files' contents last read, loaded or not
	keyPEM    []byte
	nextCheck time.Time
}

// NewCertReloader validates opts and loads the pair once; it fails if the
// pair cannot be loaded.
func NewCertReloader(opts CertReloaderConfig) (*CertReloader, error) {
	if opts.CertFile == "" || opts.KeyFile == "" {
		return nil, &ksa.ConfigError{Field: "credspec.CertReloaderConfig.CertFile", Reason: "and KeyFile are required"}
	}
	if opts.CheckInterval < 0 {
		return nil, &ksa.ConfigError{Field: "credspec.CertReloaderConfig.CheckInterval", Reason: fmt.Sprintf("is negative (%v)", opts.CheckInterval)}
	}
	if opts.CheckInterval == 0 {
		opts.CheckInterval = DefaultCertCheckInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	r := &CertReloader{opts: opts}
	r.mu.Lock()
	defer r.mu.Unlock()
	certPEM, keyPEM, err := r.read()
	if err != nil {
		return nil, err
	}
	if err := r.load(certPEM, keyPEM); err != nil {
		return nil, err
	}
	r.nextCheck = opts.Now().Add(opts.CheckInterval)
	return r, nil
}

// GetCertificate is for tls.Config.GetCertificate: it returns the current
// certificate after looking for new files if a check is due.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.opts.Now(); !now.Before(r.nextCheck) {
		r.nextCheck = now.Add(r.opts.CheckInterval)
		certPEM, keyPEM, err := r.read()
		if err == nil && bytes.Equal(certPEM, r.certPEM) && bytes.Equal(keyPEM, r.keyPEM) {
			return r.cert, nil
		}
		if err == nil {
			err = r.load(certPEM, keyPEM)
		}
		if r.opts.OnReload != nil {
			r.opts.OnReload(err)
		}
	}
	return r.cert, nil
}

// Reload loads the pair now, whether or not the files changed. On error the
// previous certificate stays in service.
func (r *CertReloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	certPEM, keyPEM, err := r.read()
	if err != nil {
		return err
	}
	return r.load(certPEM, keyPEM)
}

// Certificate returns the certificate in service.
func (r *CertReloader) Certificate() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert
}

// TLSConfig returns a server configuration (TLS 1.2 or later) that serves
// the reloader's certificate.
func (r *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}

func (r *CertReloader) read() (certPEM, keyPEM []byte, err error) {
	certPEM, err = r.opts.ReadFile(r.opts.CertFile)
	if err != nil {
		return nil, nil, fmt.Errorf("credspec: certificate file: %w", err)
	}
	keyPEM, err = r.opts.ReadFile(r.opts.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("credspec: key file: %w", err)
	}
	return certPEM, keyPEM, nil
}

// load parses the pair and puts it in service. The contents are remembered
// even when they fail to parse, so a broken pair is reported once per
// change, not at every check.
func (r *CertReloader) load(certPEM, keyPEM []byte) error {
	r.certPEM, r.keyPEM = certPEM, keyPEM
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("credspec: loading %s and %s: %w", r.opts.CertFile, r.opts.KeyFile, err)
	}
	r.cert = &cert
	return nil
}
