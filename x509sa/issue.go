package x509sa

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"math/big"
	mathrand "math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/leafcert"
)

// Issuer defaults and bounds, modelled on Kubernetes' pod certificates
// (PodCertificateRequest status validation and the kubelet's refresh).
const (
	// DefaultMaxLifetime is the longest certificate an Issuer issues when
	// IssuerConfig.MaxLifetime is zero: 24 hours, the cap Kubernetes puts
	// on kubernetes.io signers of pod certificates.
	DefaultMaxLifetime = 24 * time.Hour
	// DefaultMinLifetime is the shortest when IssuerConfig.MinLifetime is
	// zero: 1 hour, the minimum pod-certificate lifetime.
	DefaultMinLifetime = time.Hour
	// DefaultBackdate moves NotBefore into the past when
	// IssuerConfig.Backdate is zero (Kubernetes' test signer also uses 2
	// minutes; pod certificates need NotBefore within 5 minutes of the API
	// server's clock).
	DefaultBackdate = 2 * time.Minute
	// DefaultRefreshJitter bounds the random delay added to the refresh
	// time when IssuerConfig.RefreshJitter is zero: [0, 5 min), the
	// kubelet's jitter.
	DefaultRefreshJitter = 5 * time.Minute
	// RefreshMargin keeps the refresh time at least this far from NotBefore
	// and NotAfter, as pod-certificate status validation requires.
	RefreshMargin = 10 * time.Minute
	// MaxRefreshDelay caps the base refresh delay after NotBefore.
	MaxRefreshDelay = 12 * time.Hour
	// MaxLifetimeBound is the largest IssuerConfig.MaxLifetime accepted:
	// 91 days, the pod-certificate maximum for non-kubernetes.io signers.
	MaxLifetimeBound = 91 * 24 * time.Hour
	// MaxBackdate is the largest IssuerConfig.Backdate accepted.
	MaxBackdate = time.Hour
)

// IssuerConfig configures an [Issuer]. CA and Key are required; every
// other zero value is a documented default.
type IssuerConfig struct {
	// CA is the issuing certificate: a CA (basic constraints with the CA
	// flag; key usage, if present, including certificate signing) with a
	// key of a supported type.
	CA *x509.Certificate
	// Key is the CA's private key: any crypto.Signer whose public key is
	// the CA certificate's (a KMS or HSM key works).
	Key crypto.Signer
	// MaxLifetime caps every certificate (NotAfter - NotBefore). Zero means
	// [DefaultMaxLifetime]; at most [MaxLifetimeBound].
	MaxLifetime time.Duration
	// MinLifetime is the shortest certificate the issuer will issue; a
	// request whose bound (or whose CA's remaining life) allows less is
	// refused. Zero means [DefaultMinLifetime]; at least 2 x
	// [RefreshMargin], at most MaxLifetime.
	MinLifetime time.Duration
	// Backdate moves NotBefore into the past for clock skew; it counts in
	// the lifetime. Zero means [DefaultBackdate]; at most [MaxBackdate].
	// Pod certificates need it under 5 minutes.
	Backdate time.Duration
	// RefreshJitter bounds the random delay added to the refresh time.
	// Zero means [DefaultRefreshJitter]; negative is refused.
	RefreshJitter time.Duration
	// Usages are the usages the issuer grants. Zero means [ClientAuth]
	// only; set [ClientAndServerAuth] to issue serving certificates and
	// X509-SVIDs.
	Usages Usage
	// Chain are certificates to append after the leaf in Issued.ChainPEM:
	// the CA's own chain up to (not including) the root, when the CA is an
	// intermediate. Nil means none.
	Chain []*x509.Certificate
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Rand is the source of serial numbers and signing randomness. Nil
	// means crypto/rand.Reader.
	Rand io.Reader
	// Jitter returns a random duration in [0, n) for n > 0. Nil means a
	// math/rand/v2 draw. Results outside [0, n) are clamped.
	Jitter func(n time.Duration) time.Duration
}

// Issuer issues identity certificates from certificate requests with a CA
// key: for controllers implementing a signer, and for tests. It is safe for
// concurrent use if its Now, Rand and Jitter are.
type Issuer struct {
	ca       *x509.Certificate
	leaf     *leafcert.Issuer
	opts     IssuerConfig
	chainPEM []byte
}

// NewIssuer validates the configuration: the CA certificate must be a CA
// and Key its private key, both of a supported type. The key signs once
// and its signature must verify against the CA certificate. After that,
// the signature of every certificate is verified before it is returned,
// except for keys of crypto/ecdsa, crypto/ed25519 and crypto/rsa, which
// compute valid signatures by construction. Errors are a *ksa.ConfigError,
// or match jwks.ErrUnsupportedKey for a CA key of an unsupported type.
func NewIssuer(cfg IssuerConfig) (*Issuer, error) {
	ca, key := cfg.CA, cfg.Key
	if ca == nil {
		return nil, configError("CA", "is required", nil)
	}
	if key == nil {
		return nil, configError("Key", "is required", nil)
	}
	if !ca.BasicConstraintsValid || !ca.IsCA {
		return nil, configError("CA", "is not a CA certificate (basic constraints without the CA flag)", nil)
	}
	if ca.KeyUsage != 0 && ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, configError("CA", "has a key usage without certificate signing", nil)
	}
	if err := checkPublicKey(ca.PublicKey); err != nil {
		return nil, err
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(ca.PublicKey) {
		return nil, configError("Key", "is not the CA certificate's key", nil)
	}
	o := cfg
	if o.MaxLifetime == 0 {
		o.MaxLifetime = DefaultMaxLifetime
	}
	if o.MinLifetime == 0 {
		o.MinLifetime = min(DefaultMinLifetime, o.MaxLifetime)
	}
	if o.Backdate == 0 {
		o.Backdate = DefaultBackdate
	}
	if o.RefreshJitter == 0 {
		o.RefreshJitter = DefaultRefreshJitter
	}
	if o.Usages == 0 {
		o.Usages = ClientAuth
	}
	switch {
	case o.MaxLifetime < 0 || o.MaxLifetime > MaxLifetimeBound:
		return nil, configError("MaxLifetime", "must be in (0, 91 days]", nil)
	case o.MinLifetime < 2*RefreshMargin || o.MinLifetime > o.MaxLifetime:
		return nil, configError("MinLifetime", "must be in [20 minutes, MaxLifetime]", nil)
	case o.Backdate < 0 || o.Backdate > MaxBackdate:
		return nil, configError("Backdate", "must be in [0, 1 hour]", nil)
	case o.RefreshJitter < 0:
		return nil, configError("RefreshJitter", "must not be negative", nil)
	case !o.Usages.valid():
		return nil, configError("Usages", "has unknown usage bits", nil)
	}
	var chain []byte
	for i, c := range o.Chain {
		if c == nil {
			return nil, configError("Chain", "holds a nil certificate at index "+strconv.Itoa(i), nil)
		}
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Jitter == nil {
		o.Jitter = defaultJitter
	}
	leaf, err := leafcert.New(ca, key, o.Rand)
	if err != nil {
		return nil, configError("Key", "cannot sign for the CA certificate", err)
	}
	o.Chain = slices.Clone(o.Chain)
	return &Issuer{ca: ca, leaf: leaf, opts: o, chainPEM: chain}, nil
}

func defaultJitter(n time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(mathrand.Int64N(int64(n)))
}

// IssueRequest is one request to issue. CSR is required.
type IssueRequest struct {
	// CSR is the DER certificate request (spec.request decoded, or a
	// PodCertificateRequest's stubPKCS10Request).
	CSR []byte
	// Usage is what the requester asked for outside the CSR (spec.usages,
	// see kubeapi.UsageFromKeyUsages). Zero means the usage the CSR's extension
	// request asks for; when both are set they must agree.
	Usage Usage
	// MaxLifetime is the requester's bound on the lifetime
	// (spec.expirationSeconds, a pod certificate's maxExpirationSeconds).
	// Zero means the issuer's maximum. Unlike Kubernetes' CSR signer, which
	// raises short requests to 10 minutes, a bound below the issuer's
	// minimum is refused.
	MaxLifetime time.Duration
}

// Issued is a newly issued certificate and its timing.
type Issued struct {
	// Leaf is the certificate.
	Leaf *x509.Certificate
	// ChainPEM is the leaf and then IssuerConfig.Chain as CERTIFICATE PEM
	// blocks: the form of a CertificateSigningRequest's status.certificate
	// and a PodCertificateRequest's status.certificateChain.
	ChainPEM []byte
	// Subject is the identity, decoded back from the issued certificate.
	Subject Subject
	// Usage is the usage issued.
	Usage Usage
	// NotBefore and NotAfter are the leaf's validity, whole seconds.
	NotBefore, NotAfter time.Time
	// BeginRefreshAt is when the holder should start getting a new
	// certificate: NotBefore + min(lifetime/2, [MaxRefreshDelay]) + a jitter
	// in [0, RefreshJitter), kept within [NotBefore + RefreshMargin,
	// NotAfter - RefreshMargin], whole seconds (valid as a pod
	// certificate's status.beginRefreshAt).
	BeginRefreshAt time.Time
}

// Issue signs a certificate for the request:
//
//   - the request must pass [ParseCSR];
//   - the subject is the request's raw subject bytes, copied (never
//     re-encoded from parsed fields, which would drop the UID attribute);
//   - SANs are the request's DNS names, IP addresses and SPIFFE ID;
//   - the usage is the one requested ([IssueRequest.Usage] or the CSR's
//     extension request), which must be within IssuerConfig.Usages; key
//     usage digital signature, plus key encipherment for RSA keys; basic
//     constraints without the CA flag; no other requested extension;
//   - lifetime: the issuer's MaxLifetime, lowered to the request's
//     MaxLifetime and to the CA's NotAfter; refused (a *[LifetimeError]) if
//     that is under MinLifetime or the CA is not valid now.
//
// The issued certificate is decoded back ([DecodeCertificate]) and must
// carry exactly the requested identity, or nothing is returned.
func (is *Issuer) Issue(req IssueRequest) (*Issued, error) {
	csr, err := ParseCSR(req.CSR)
	if err != nil {
		return nil, err
	}
	usage, err := resolveUsage(req.Usage, csr)
	if err != nil {
		return nil, err
	}
	if usage&^is.opts.Usages != 0 {
		return nil, usageError(usage.String(), "not allowed by this issuer (it grants "+is.opts.Usages.String()+")")
	}
	nb, na, err := is.validity(req.MaxLifetime)
	if err != nil {
		return nil, err
	}
	serial, err := is.serial()
	if err != nil {
		return nil, err
	}
	tmpl := &leafcert.Template{
		Serial:      serial,
		Subject:     csr.req.RawSubject,
		NotBefore:   nb,
		NotAfter:    na,
		PublicKey:   csr.PublicKey,
		KeyUsage:    keyUsageFor(csr.PublicKey),
		ExtKeyUsage: usage.ExtKeyUsages(),
		DNSNames:    csr.DNSNames,
		IPAddresses: toNetIPs(csr.IPAddresses),
	}
	if !csr.SPIFFEID.IsZero() {
		tmpl.URIs = csr.req.URIs
	}
	der, err := is.leaf.Issue(is.opts.Rand, tmpl)
	if err != nil {
		return nil, wrap(ErrSigning, "signing the certificate", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, certificateError("issued certificate does not parse", err)
	}
	got, err := DecodeCertificate(leaf)
	if err != nil {
		return nil, certificateError("issued certificate does not decode", err)
	}
	if !got.Subject.Equal(csr.Subject) || got.SPIFFEID != csr.SPIFFEID || got.Usage != usage ||
		!slices.Equal(got.DNSNames, csr.DNSNames) || !slices.Equal(got.IPAddresses, csr.IPAddresses) {
		return nil, certificateError("issued certificate does not carry the requested identity", nil)
	}
	chain := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	chain = append(chain, is.chainPEM...)
	return &Issued{
		Leaf:           leaf,
		ChainPEM:       chain,
		Subject:        got.Subject,
		Usage:          usage,
		NotBefore:      nb,
		NotAfter:       na,
		BeginRefreshAt: is.refreshAt(nb, na),
	}, nil
}

// validity computes NotBefore and NotAfter.
func (is *Issuer) validity(bound time.Duration) (nb, na time.Time, err error) {
	o := &is.opts
	if bound < 0 {
		return nb, na, &ksa.ConfigError{Field: "x509sa.IssueRequest.MaxLifetime", Reason: "must not be negative"}
	}
	lifetime := o.MaxLifetime
	if bound > 0 && bound < lifetime {
		lifetime = bound
	}
	if lifetime < o.MinLifetime {
		return nb, na, &LifetimeError{Lifetime: lifetime, Min: o.MinLifetime, Max: o.MaxLifetime, Reason: "the request's bound is below the issuer's minimum"}
	}
	now := o.Now()
	if now.Before(is.ca.NotBefore) || now.After(is.ca.NotAfter) {
		return nb, na, &LifetimeError{Min: o.MinLifetime, Max: o.MaxLifetime, Reason: "the issuing CA is not valid at " + now.UTC().Format(time.RFC3339)}
	}
	nb = now.Add(-o.Backdate).UTC().Truncate(time.Second)
	na = nb.Add(lifetime)
	if caEnd := is.ca.NotAfter.UTC().Truncate(time.Second); na.After(caEnd) {
		na = caEnd
		if na.Sub(nb) < o.MinLifetime {
			return time.Time{}, time.Time{}, &LifetimeError{Lifetime: na.Sub(nb), Min: o.MinLifetime, Max: o.MaxLifetime, Reason: "the issuing CA expires too soon"}
		}
	}
	return nb, na, nil
}

// refreshAt computes the refresh time for a validity window at least
// 2 x RefreshMargin long.
func (is *Issuer) refreshAt(nb, na time.Time) time.Time {
	lifetime := na.Sub(nb)
	at := nb.Add(min(lifetime/2, MaxRefreshDelay))
	if n := is.opts.RefreshJitter; n > 0 {
		j := is.opts.Jitter(n)
		at = at.Add(min(max(j, 0), n-1))
	}
	lo, hi := nb.Add(RefreshMargin), na.Add(-RefreshMargin)
	if at.Before(lo) {
		at = lo
	}
	if at.After(hi) {
		at = hi
	}
	return at.Truncate(time.Second)
}

// serial draws a positive 127-bit serial number.
func (is *Issuer) serial() (*big.Int, error) {
	var b [16]byte
	if _, err := io.ReadFull(is.opts.Rand, b[:]); err != nil {
		return nil, wrap(ErrSigning, "drawing a serial number", err)
	}
	b[0] &= 0x7f
	s := new(big.Int).SetBytes(b[:])
	if s.Sign() == 0 {
		return nil, wrap(ErrSigning, "drawing a serial number: the random source returned zeros", nil)
	}
	return s, nil
}

// configError reports an IssuerConfig field NewIssuer refuses.
func configError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: "x509sa.IssuerConfig." + field, Reason: reason, Err: cause}
}
