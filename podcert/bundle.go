package podcert

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// Limits of the workload side.
const (
	// MaxBundleSize bounds a credential bundle, or a key file and a chain
	// file together, in bytes: the API's chain limit plus room for the
	// largest key.
	MaxBundleSize = MaxCertificateChainSize + 16<<10
	// MaxBundleCertificates bounds the certificates of a chain, leaf
	// included.
	MaxBundleCertificates = x509sa.MaxChainLength
	// MaxTrustBundleSize bounds a trust bundle, in bytes (a
	// ClusterTrustBundle holds at most 1 MiB).
	MaxTrustBundleSize = 1 << 20
	// MaxTrustBundleCertificates bounds the certificates of a trust
	// bundle.
	MaxTrustBundleCertificates = 128
)

// Credential is a pod's key and certificate chain, ready for TLS, and the
// identity the leaf carries.
type Credential struct {
	// Certificate is the key and chain (leaf first) for crypto/tls, with
	// Leaf set.
	Certificate tls.Certificate
	// Identity is what the leaf proves: the service account (with UID),
	// the pod name and the credential ID.
	Identity ksa.Identity
	// NotAfter is the leaf's expiry.
	NotAfter time.Time
}

// ParseBundle reads a credential bundle as the kubelet writes it to a
// podCertificate projection's credentialBundlePath: a PKCS#8 PRIVATE KEY
// block and CERTIFICATE blocks, leaf first. See [ParseKeyAndChain] for the
// rules.
func ParseBundle(data []byte) (*Credential, error) {
	if len(data) > MaxBundleSize {
		return nil, &LimitError{What: "bundle bytes", Size: len(data), Limit: MaxBundleSize}
	}
	return parseBlocks(data, true, true)
}

// ParseKeyAndChain reads the separate keyPath and certificateChainPath
// files of a podCertificate projection. The rules, for both forms: at most
// [MaxBundleSize] bytes; nothing but PEM blocks and white space; exactly
// one PRIVATE KEY block (PKCS#8, no headers) of a key type [CheckKey]
// accepts; 1 to [MaxBundleCertificates] CERTIFICATE blocks that parse, the
// first of them for that key and an identity certificate x509sa decodes.
// Errors are a *[BundleError] or a *[LimitError].
func ParseKeyAndChain(keyPEM, chainPEM []byte) (*Credential, error) {
	if n := len(keyPEM) + len(chainPEM); n > MaxBundleSize {
		return nil, &LimitError{What: "bundle bytes", Size: n, Limit: MaxBundleSize}
	}
	joined := make([]byte, 0, len(keyPEM)+1+len(chainPEM))
	joined = append(append(append(joined, keyPEM...), '\n'), chainPEM...)
	if _, err := parseBlocks(keyPEM, true, false); err != nil {
		return nil, err
	}
	if _, err := parseBlocks(chainPEM, false, true); err != nil {
		return nil, err
	}
	return parseBlocks(joined, true, true)
}

// parseBlocks reads PEM blocks, requiring a key and/or certificates; with
// both, it builds the credential.
func parseBlocks(data []byte, wantKey, wantCerts bool) (*Credential, error) {
	var (
		key   crypto.Signer
		certs [][]byte
		rest  = data
	)
	for {
		trimmed := bytes.TrimLeft(rest, " \t\r\n")
		if len(trimmed) == 0 {
			break
		}
		if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
			return nil, &BundleError{Reason: "data outside PEM blocks"}
		}
		var block *pem.Block
		block, rest = pem.Decode(trimmed)
		if block == nil {
			return nil, &BundleError{Reason: "malformed PEM block"}
		}
		if len(block.Headers) > 0 {
			return nil, &BundleError{Reason: "PEM headers are not allowed"}
		}
		switch block.Type {
		case "PRIVATE KEY":
			if !wantKey {
				return nil, &BundleError{Reason: "a private key in the certificate chain"}
			}
			if key != nil {
				return nil, &BundleError{Reason: "more than one private key"}
			}
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, &BundleError{Reason: "the private key is not PKCS#8", Err: err}
			}
			signer, ok := k.(crypto.Signer)
			if !ok {
				return nil, &BundleError{Reason: "the private key cannot sign"}
			}
			if err := CheckKey(signer.Public()); err != nil {
				return nil, &BundleError{Reason: "the private key", Err: err}
			}
			key = signer
		case "CERTIFICATE":
			if !wantCerts {
				return nil, &BundleError{Reason: "a certificate in the key file"}
			}
			if len(certs) == MaxBundleCertificates {
				return nil, &LimitError{What: "certificates", Size: MaxBundleCertificates + 1, Limit: MaxBundleCertificates}
			}
			certs = append(certs, block.Bytes)
		default:
			return nil, &BundleError{Reason: "unexpected PEM block " + strconv.Quote(block.Type)}
		}
	}
	switch {
	case wantKey && key == nil:
		return nil, &BundleError{Reason: "no private key"}
	case wantCerts && len(certs) == 0:
		return nil, &BundleError{Reason: "no certificate"}
	case !wantKey || !wantCerts:
		return nil, nil
	}
	leaf, err := x509.ParseCertificate(certs[0])
	if err != nil {
		return nil, &BundleError{Reason: "the leaf does not parse", Err: err}
	}
	for i, der := range certs[1:] {
		if _, err := x509.ParseCertificate(der); err != nil {
			return nil, &BundleError{Reason: "certificate " + strconv.Itoa(i+1) + " does not parse", Err: err}
		}
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(leaf.PublicKey) {
		return nil, &BundleError{Reason: "the private key is not the leaf's"}
	}
	decoded, err := x509sa.DecodeCertificate(leaf)
	if err != nil {
		return nil, &BundleError{Reason: "the leaf carries no identity", Err: err}
	}
	return &Credential{
		Certificate: tls.Certificate{Certificate: certs, PrivateKey: key, Leaf: leaf},
		Identity:    decoded.Identity(),
		NotAfter:    leaf.NotAfter,
	}, nil
}

// SourceConfig configures a [Source]: BundlePath, or KeyPath and ChainPath.
type SourceConfig struct {
	// BundlePath is the projection's credentialBundlePath file.
	BundlePath string
	// KeyPath and ChainPath are the projection's keyPath and
	// certificateChainPath files, used when BundlePath is empty.
	KeyPath, ChainPath string
	// Clock returns the current time, to refuse an expired credential.
	// Nil means time.Now.
	Clock func() time.Time
}

// Source serves a pod's mounted credential to crypto/tls and follows the
// kubelet's refreshes: on every use it compares the files' identity, size
// and modification time with those it loaded and, when they changed, loads
// them again. A new credential replaces the old one atomically, and only
// when it parses in full (key and chain agree); until then the old one
// keeps serving while it is valid. It is safe for concurrent use.
type Source struct {
	cfg   SourceConfig
	paths []string
	mu    sync.Mutex // serializes loads
	cur   atomic.Pointer[loaded]
}

type loaded struct {
	cred  *Credential
	stamp []os.FileInfo
}

// NewSource validates the configuration and loads the credential once.
// Errors are a *[ConfigError], or the load's error.
func NewSource(cfg SourceConfig) (*Source, error) {
	s := &Source{cfg: cfg}
	switch {
	case cfg.BundlePath != "" && (cfg.KeyPath != "" || cfg.ChainPath != ""):
		return nil, &ConfigError{Field: "BundlePath", Reason: "set either BundlePath or KeyPath and ChainPath"}
	case cfg.BundlePath != "":
		s.paths = []string{cfg.BundlePath}
	case cfg.KeyPath != "" && cfg.ChainPath != "":
		s.paths = []string{cfg.KeyPath, cfg.ChainPath}
	default:
		return nil, &ConfigError{Field: "BundlePath", Reason: "set BundlePath, or KeyPath and ChainPath"}
	}
	if s.cfg.Clock == nil {
		s.cfg.Clock = time.Now
	}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload reads the files now and, if they hold a valid credential, serves
// it from then on. On error the previous credential stays.
func (s *Source) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

func (s *Source) load() error {
	stamp := make([]os.FileInfo, len(s.paths))
	data := make([][]byte, len(s.paths))
	total := 0
	for i, p := range s.paths {
		f, err := os.Open(p)
		if err != nil {
			return &BundleError{Path: p, Reason: "cannot open", Err: errors.Unwrap(err)}
		}
		st, err := f.Stat()
		if err == nil && st.Size() > int64(MaxBundleSize-total) {
			err = &LimitError{What: "bundle bytes", Size: int(min(st.Size(), 1<<30)) + total, Limit: MaxBundleSize}
		}
		if err == nil {
			data[i], err = readAllLimited(f, MaxBundleSize-total)
		}
		_ = f.Close()
		if err != nil {
			return &BundleError{Path: p, Reason: "cannot read", Err: errors.Unwrap(err)}
		}
		stamp[i], total = st, total+len(data[i])
	}
	var cred *Credential
	var err error
	if len(data) == 1 {
		cred, err = ParseBundle(data[0])
	} else {
		cred, err = ParseKeyAndChain(data[0], data[1])
	}
	if err != nil {
		return &BundleError{Path: s.paths[0], Reason: "cannot use", Err: err}
	}
	s.cur.Store(&loaded{cred: cred, stamp: stamp})
	return nil
}

func readAllLimited(f *os.File, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, &LimitError{What: "bundle bytes", Size: len(data), Limit: limit}
	}
	return data, nil
}

// changed reports whether any file differs from the loaded one.
func (s *Source) changed(l *loaded) bool {
	for i, p := range s.paths {
		st, err := os.Stat(p)
		if err != nil {
			return true
		}
		old := l.stamp[i]
		if !os.SameFile(st, old) || st.Size() != old.Size() || !st.ModTime().Equal(old.ModTime()) {
			return true
		}
	}
	return false
}

// Current returns the credential to use now, loading the files again if
// they changed. A failed load keeps the previous credential; an error is
// returned only when no credential valid at the clock's time is left
// (*[BundleError]).
func (s *Source) Current() (*Credential, error) {
	l := s.cur.Load()
	var loadErr error
	if s.changed(l) {
		s.mu.Lock()
		if l2 := s.cur.Load(); l2 == l || s.changed(l2) {
			loadErr = s.load()
		}
		s.mu.Unlock()
		l = s.cur.Load()
	}
	if now := s.cfg.Clock(); !now.Before(l.cred.NotAfter) {
		return nil, &BundleError{Path: s.paths[0], Reason: "the credential expired at " + l.cred.NotAfter.UTC().Format(time.RFC3339), Err: loadErr}
	}
	return l.cred, nil
}

// GetCertificate is for tls.Config.GetCertificate (serving).
func (s *Source) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c, err := s.Current()
	if err != nil {
		return nil, err
	}
	return &c.Certificate, nil
}

// GetClientCertificate is for tls.Config.GetClientCertificate.
func (s *Source) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c, err := s.Current()
	if err != nil {
		return nil, err
	}
	return &c.Certificate, nil
}
