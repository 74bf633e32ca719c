package podcert

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/leafcert"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// Signer defaults and bounds.
const (
	// DefaultTrustDomain is the SPIFFE trust domain when
	// SignerConfig.TrustDomain is empty.
	DefaultTrustDomain = "cluster.local"
	// DefaultMaxLifetime caps certificates when SignerConfig.MaxLifetime is
	// zero: 24 hours, the API's default maxExpirationSeconds.
	DefaultMaxLifetime = 24 * time.Hour
	// MinLifetime is the shortest certificate the API accepts: one hour.
	MinLifetime = time.Hour
	// DefaultBackdate moves notBefore into the past when
	// SignerConfig.Backdate is zero, for clocks behind the signer's.
	DefaultBackdate = 2 * time.Minute
	// MaxBackdate is the largest SignerConfig.Backdate: kube-apiserver wants
	// notBefore strictly within 5 minutes of its own clock, and leaves a
	// minute for the signer's clock and the write.
	MaxBackdate = 4 * time.Minute
	// RefreshMargin keeps beginRefreshAt at least this far from notBefore
	// and notAfter, as the API requires.
	RefreshMargin = 10 * time.Minute
	// MaxChainLength bounds SignerConfig.Chain.
	MaxChainLength = 8
)

// SignerConfig configures a [Signer]. SignerName, Key and Chain are
// required; every other zero value is a documented default.
type SignerConfig struct {
	// SignerName is the signer this Signer answers for
	// (example.com/signer-name); requests for other signers are not
	// decided.
	SignerName string
	// Key is the CA's issuing key: any crypto.Signer (a KMS or HSM key
	// works) whose public key is Chain[0]'s. [NewSigner] has it sign once
	// and verifies the signature against Chain[0]. After that, the signature on every
	// certificate is verified before the certificate is returned, except
	// for keys of crypto/ecdsa, crypto/ed25519 and crypto/rsa: those
	// compute valid signatures by construction (crypto/rsa checks its
	// own), and checking again would cost more than signing.
	Key crypto.Signer
	// Chain is the CA's certificate first, then its issuers, if any, up to
	// and possibly including the root. Issued chains carry the leaf and
	// every certificate of Chain except a self-signed root (which belongs
	// in the trust bundle; see [Signer.TrustBundle]).
	Chain []*x509.Certificate
	// TrustDomain is the SPIFFE trust domain of the URI SAN
	// spiffe://<TrustDomain>/ns/<namespace>/sa/<name>. Empty means
	// [DefaultTrustDomain].
	TrustDomain string
	// MaxLifetime caps every certificate; the request's
	// maxExpirationSeconds and the CA's own expiry lower it further. Zero
	// means [DefaultMaxLifetime]; it must be in [MinLifetime, 91 days] (24
	// hours for kubernetes.io signers).
	MaxLifetime time.Duration
	// Backdate moves notBefore before the clock's time. Zero means
	// [DefaultBackdate]; negative means none; at most [MaxBackdate].
	Backdate time.Duration
	// Policy admits serving hosts and subject extensions asked for through
	// unverifiedUserAnnotations. Nil refuses every annotation: such
	// requests are Denied with InvalidUnverifiedUserAnnotations.
	Policy Policy
	// ServeHostsKey and ExtensionsKey are the annotation keys read. Empty
	// means [DefaultServeHostsKey] and [DefaultExtensionsKey].
	ServeHostsKey, ExtensionsKey string
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Rand is the source of serial numbers and signing randomness. Nil
	// means crypto/rand.Reader.
	Rand io.Reader
}

// Signer decides PodCertificateRequests for one signer name: it checks
// each request, and issues, denies or fails it with a status the API
// server accepts. It is safe for concurrent use if its Key, Policy, Now
// and Rand are.
type Signer struct {
	cfg      SignerConfig
	caCert   *x509.Certificate
	issuer   *leafcert.Issuer
	chainPEM []byte
	rootPEM  []byte
}

// NewSigner validates the configuration: a signer name of the form
// example.com/name, a key whose public key is the first certificate's,
// which must be a CA allowed to sign certificates and of a supported key
// type, bounds within range. Errors are a *ksa.ConfigError.
func NewSigner(cfg SignerConfig) (*Signer, error) {
	c := cfg
	if c.SignerName == "" {
		return nil, signerConfigError("SignerName", "is required", nil)
	}
	if err := checkSignerName(c.SignerName); err != nil {
		return nil, signerConfigError("SignerName", "is invalid", err)
	}
	switch {
	case c.Key == nil:
		return nil, signerConfigError("Key", "is required", nil)
	case len(c.Chain) == 0:
		return nil, signerConfigError("Chain", "is required (the CA's certificate first)", nil)
	case len(c.Chain) > MaxChainLength:
		return nil, signerConfigError("Chain", "holds more than "+strconv.Itoa(MaxChainLength)+" certificates", nil)
	}
	for i, cert := range c.Chain {
		if cert == nil {
			return nil, signerConfigError("Chain", "holds a nil certificate at index "+strconv.Itoa(i), nil)
		}
	}
	ca := c.Chain[0]
	if !ca.BasicConstraintsValid || !ca.IsCA {
		return nil, signerConfigError("Chain", "starts with a certificate that is not a CA (basic constraints without the CA flag)", nil)
	}
	if ca.KeyUsage != 0 && ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, signerConfigError("Chain", "starts with a CA whose key usage does not include certificate signing", nil)
	}
	if err := jwks.CheckPublicKey(ca.PublicKey); err != nil {
		// A CA may use any key jwks accepts (RSA from 2048 bits).
		return nil, signerConfigError("Chain", "starts with a CA whose key is refused", keyError(ca.PublicKey, err))
	}
	if pub, ok := c.Key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(ca.PublicKey) {
		return nil, signerConfigError("Key", "is not the key of the first certificate of Chain", nil)
	}
	if c.TrustDomain == "" {
		c.TrustDomain = DefaultTrustDomain
	}
	if err := x509sa.CheckTrustDomain(c.TrustDomain); err != nil {
		return nil, signerConfigError("TrustDomain", "is invalid", err)
	}
	hi := time.Duration(MaxMaxExpirationSeconds) * time.Second
	if IsKubernetesSignerName(c.SignerName) {
		hi = KubernetesMaxExpirationSeconds * time.Second
	}
	if c.MaxLifetime == 0 {
		c.MaxLifetime = min(DefaultMaxLifetime, hi)
	}
	if c.MaxLifetime < MinLifetime || c.MaxLifetime > hi {
		return nil, signerConfigError("MaxLifetime", "must be in [1h, "+hi.String()+"]", nil)
	}
	switch {
	case c.Backdate == 0:
		c.Backdate = DefaultBackdate
	case c.Backdate < 0:
		c.Backdate = 0
	case c.Backdate > MaxBackdate:
		return nil, signerConfigError("Backdate", "must be at most "+MaxBackdate.String(), nil)
	}
	if c.ServeHostsKey == "" {
		c.ServeHostsKey = DefaultServeHostsKey
	}
	if c.ExtensionsKey == "" {
		c.ExtensionsKey = DefaultExtensionsKey
	}
	if c.ServeHostsKey == c.ExtensionsKey {
		return nil, signerConfigError("ExtensionsKey", "must differ from ServeHostsKey", nil)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	issuer, err := leafcert.New(ca, c.Key, c.Rand)
	if err != nil {
		return nil, signerConfigError("Key", "cannot sign for the first certificate of Chain", err)
	}
	s := &Signer{cfg: c, caCert: ca, issuer: issuer}
	for _, cert := range c.Chain {
		block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
		if isSelfSigned(cert) {
			s.rootPEM = append(s.rootPEM, block...)
			continue
		}
		s.chainPEM = append(s.chainPEM, block...)
	}
	if s.rootPEM == nil {
		last := c.Chain[len(c.Chain)-1]
		s.rootPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: last.Raw})
	}
	c.Chain = append([]*x509.Certificate(nil), c.Chain...)
	return s, nil
}

// signerConfigError reports a SignerConfig field NewSigner refuses.
func signerConfigError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: "podcert.SignerConfig." + field, Reason: reason, Err: cause}
}

func isSelfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil
}

// SignerName returns the signer name the Signer answers for.
func (s *Signer) SignerName() string { return s.cfg.SignerName }

// TrustDomain returns the SPIFFE trust domain of the certificates the
// Signer issues (SignerConfig.TrustDomain, or [DefaultTrustDomain]).
func (s *Signer) TrustDomain() string { return s.cfg.TrustDomain }

// MaxLifetime returns the longest lifetime of a certificate the Signer
// issues (SignerConfig.MaxLifetime, or its default): no certificate it
// issued at time t is valid after t + MaxLifetime.
func (s *Signer) MaxLifetime() time.Duration { return s.cfg.MaxLifetime }

// CA returns the issuing CA's certificate, the first of
// SignerConfig.Chain.
func (s *Signer) CA() *x509.Certificate { return s.caCert }

// TrustBundle returns the PEM certificates a relying party trusts for this
// signer: the self-signed root at the end of SignerConfig.Chain, or the last
// certificate of the chain when no root was given. It is what a
// ClusterTrustBundle for the signer carries.
func (s *Signer) TrustBundle() []byte { return bytes.Clone(s.rootPEM) }

// serial draws a positive 127-bit serial number.
func (s *Signer) serial() (*big.Int, error) {
	var b [16]byte
	if _, err := io.ReadFull(s.cfg.Rand, b[:]); err != nil {
		return nil, wrap(ErrSigning, "drawing a serial number", err)
	}
	b[0] &= 0x7f
	n := new(big.Int).SetBytes(b[:])
	if n.Sign() == 0 {
		return nil, wrap(ErrSigning, "drawing a serial number: the random source returned zeros", nil)
	}
	return n, nil
}
