package podcert

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"strconv"

	"github.com/ksa-go/ksa"
)

// TrustBundle is a parsed trust bundle: the roots a peer's chain must end
// in, as a ClusterTrustBundle carries them for a signer. It is immutable.
type TrustBundle struct {
	// Certificates are the bundle's certificates, in the order of its
	// PEM blocks. They MUST NOT be modified.
	Certificates []*x509.Certificate
	pool         *x509.CertPool
	raw          map[string]struct{}
}

// Contains reports whether cert is one of the bundle's certificates (the
// same DER bytes).
func (b *TrustBundle) Contains(cert *x509.Certificate) bool {
	if cert == nil {
		return false
	}
	_, ok := b.raw[string(cert.Raw)]
	return ok
}

// CertPool returns a new pool holding the bundle's certificates.
func (b *TrustBundle) CertPool() *x509.CertPool { return b.pool.Clone() }

// trustError reports a trust bundle that cannot be used. It matches
// [ErrInvalidTrustBundle] and wraps cause, if any.
func trustError(reason string, cause error) error {
	return wrap(ErrInvalidTrustBundle, "trust bundle: "+reason, cause)
}

// ParseTrustBundle reads a trust bundle: the PEM certificates of a
// ClusterTrustBundle's spec.trustBundle, or of the file a
// clusterTrustBundle projection writes (the certificates of every bundle
// it selects). The rules: at most [MaxTrustBundleSize] bytes; only
// CERTIFICATE blocks (text between them is ignored, as kube-apiserver
// ignores it), 1 to [MaxTrustBundleCertificates] of them, each of which
// parses. Errors match [ErrInvalidTrustBundle], or [ErrLimit] for the
// size.
func ParseTrustBundle(data []byte) (*TrustBundle, error) {
	if len(data) > MaxTrustBundleSize {
		return nil, limit("trust bundle bytes", len(data), MaxTrustBundleSize)
	}
	b := &TrustBundle{pool: x509.NewCertPool(), raw: map[string]struct{}{}}
	rest := data
	for len(bytes.TrimSpace(rest)) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, trustError("must hold only CERTIFICATE PEM blocks", nil)
		}
		n := len(b.Certificates)
		if n == MaxTrustBundleCertificates {
			return nil, trustError("holds more than "+strconv.Itoa(MaxTrustBundleCertificates)+" certificates", nil)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, trustError("certificate "+strconv.Itoa(n)+" does not parse", err)
		}
		b.Certificates = append(b.Certificates, cert)
		b.pool.AddCert(cert)
		b.raw[string(cert.Raw)] = struct{}{}
	}
	if len(b.Certificates) == 0 {
		return nil, trustError("no certificate", nil)
	}
	return b, nil
}

// TrustFileConfig configures a [TrustFile]. Path is required.
type TrustFileConfig struct {
	// Path is the trust bundle's file: a clusterTrustBundle projection's
	// path in a pod, or any PEM file [ParseTrustBundle] reads.
	Path string
	// OnReload, when set, is called after every load that a changed file
	// triggers (not after [TrustFile.Reload], which returns its error),
	// with nil on success or the error that kept the previous bundle in
	// service: a hook for logs and metrics. It is called with the file's
	// lock held and must not call the TrustFile.
	OnReload func(err error)
}

// TrustFile serves a trust bundle from a file and follows its
// replacements, as [Source] follows credential files: the kubelet
// rewrites a clusterTrustBundle projection when a ClusterTrustBundle it
// selects changes (a CA published for a rotation, an old one removed). It
// runs no goroutine and no timer: on every use it compares the file's
// identity, size and modification time with those it loaded and, when
// they changed, loads it again. A new bundle replaces the old one
// atomically, and only when it parses in full; until then the old one
// stays. It is safe for concurrent use.
type TrustFile struct {
	files reloader[*TrustBundle]
}

// trustBundle names trust bundle files in errors.
const trustBundle = "trust bundle"

// NewTrustFile validates the configuration and loads the bundle once.
// Errors are a *ksa.ConfigError, or the load's error (matching
// [ErrInvalidTrustBundle]).
func NewTrustFile(cfg TrustFileConfig) (*TrustFile, error) {
	if cfg.Path == "" {
		return nil, &ksa.ConfigError{Field: "podcert.TrustFileConfig.Path", Reason: "is required"}
	}
	f := &TrustFile{files: reloader[*TrustBundle]{
		paths: []string{cfg.Path}, what: trustBundle, max: MaxTrustBundleSize, onReload: cfg.OnReload,
		parse: func(data [][]byte) (*TrustBundle, error) { return ParseTrustBundle(data[0]) },
	}}
	if err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Reload reads the file now and, if it holds a valid bundle, serves it
// from then on. On error the previous bundle stays.
func (f *TrustFile) Reload() error { return f.files.reload(ErrInvalidTrustBundle) }

// Current returns the bundle to use now, loading the file again if it
// changed; a failed load keeps the previous bundle (and is reported to
// TrustFileConfig.OnReload). The bundle returned is the same pointer
// until a load replaces it.
func (f *TrustFile) Current() *TrustBundle {
	b, _ := f.files.current(ErrInvalidTrustBundle)
	return b
}
