package podcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/x509sa"
)

// Self-signed serving certificates.
const (
	// DefaultSelfSignedLifetime is how long a [SelfSigned] certificate is
	// valid when SelfSignedConfig.Lifetime is zero: one day.
	DefaultSelfSignedLifetime = 24 * time.Hour
	// MaxSelfSignedLifetime bounds SelfSignedConfig.Lifetime: 91 days, the
	// longest a pod certificate lives.
	MaxSelfSignedLifetime = 91 * 24 * time.Hour
	// selfSignedBackdate moves NotBefore before the clock's time, for
	// clients whose clock is a little behind.
	selfSignedBackdate = time.Minute
)

// SelfSignedConfig configures [SelfSigned]. The zero value makes a one-day
// certificate for localhost, 127.0.0.1 and ::1.
type SelfSignedConfig struct {
	// CommonName is the subject's common name. Empty means "localhost".
	CommonName string
	// Hosts are the DNS names and IP addresses the certificate is valid
	// for, read with x509sa.SplitHosts' rules. Nil means localhost,
	// 127.0.0.1 and ::1.
	Hosts []string
	// Lifetime is how long the certificate is valid from the clock's time.
	// Zero means [DefaultSelfSignedLifetime]; it must be positive and at
	// most [MaxSelfSignedLifetime].
	Lifetime time.Duration
	// Now returns the current time; NotBefore is a minute before it. Nil
	// means time.Now.
	Now func() time.Time
	// Rand is the source of the serial number. Nil means
	// crypto/rand.Reader. (The key comes from crypto/ecdsa, which draws
	// from a secure source of its own.)
	Rand io.Reader
}

// SelfSigned makes a serving certificate signed by its own key, for a
// server that has no certificate of its own yet (a webhook on loopback, a
// test): an ECDSA P-256 key, the hosts as DNS and IP SANs, server auth
// only, not a CA. It returns the certificate with its key for
// tls.Config.Certificates (Leaf set), and the certificate alone as PEM for
// the clients to trust (a webhook configuration's caBundle). Errors are a
// *ksa.ConfigError, or match [ErrSigning] when the random source fails.
func SelfSigned(cfg SelfSignedConfig) (tls.Certificate, []byte, error) {
	if cfg.CommonName == "" {
		cfg.CommonName = "localhost"
	}
	if cfg.Hosts == nil {
		cfg.Hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	dnsNames, ips, err := x509sa.SplitHosts(cfg.Hosts)
	if err != nil {
		return tls.Certificate{}, nil, &ksa.ConfigError{Field: "podcert.SelfSignedConfig.Hosts", Reason: "holds a host that cannot be a SAN", Err: err}
	}
	switch {
	case cfg.Lifetime == 0:
		cfg.Lifetime = DefaultSelfSignedLifetime
	case cfg.Lifetime < 0 || cfg.Lifetime > MaxSelfSignedLifetime:
		return tls.Certificate{}, nil, &ksa.ConfigError{Field: "podcert.SelfSignedConfig.Lifetime", Reason: "must be positive and at most " + MaxSelfSignedLifetime.String()}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, errs.Wrap(prefix, ErrSigning, "generating the self-signed certificate's key", err)
	}
	serial, err := rand.Int(cfg.Rand, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, errs.Wrap(prefix, ErrSigning, "drawing a serial number", err)
	}
	now := cfg.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cfg.CommonName},
		DNSNames:              dnsNames,
		NotBefore:             now.Add(-selfSignedBackdate),
		NotAfter:              now.Add(cfg.Lifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
	}
	der, err := x509.CreateCertificate(cfg.Rand, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, errs.Wrap(prefix, ErrSigning, "signing the self-signed certificate", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, errs.Wrap(prefix, ErrSigning, "the self-signed certificate does not parse", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
