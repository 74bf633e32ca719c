package x509sa

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/netip"
	"time"

	"github.com/ksa-go/ksa"
)

// CredentialIDPrefix starts the credential ID kube-apiserver records for a
// client certificate: X509SHA256=<lower-case hex SHA-256 of the leaf DER>.
const CredentialIDPrefix = "X509SHA256="

// CredentialID returns the credential ID kube-apiserver's x509
// authenticator puts in the authentication.kubernetes.io/credential-id
// extra for this certificate (see [ksa.ExtraCredentialID]), for audit
// correlation.
func CredentialID(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	var b [len(CredentialIDPrefix) + 2*sha256.Size]byte
	copy(b[:], CredentialIDPrefix)
	hex.Encode(b[len(CredentialIDPrefix):], sum[:])
	return string(b[:])
}

// Certificate is an identity certificate, decoded by [DecodeCertificate] or
// verified by [Verifier.Verify].
type Certificate struct {
	// Leaf is the certificate.
	Leaf *x509.Certificate
	// Subject is the decoded identity.
	Subject Subject
	// DNSNames and IPAddresses are the serve hosts.
	DNSNames    []string
	IPAddresses []netip.Addr
	// SPIFFEID is the certificate's SPIFFE ID; zero when it has none.
	SPIFFEID SPIFFEID
	// Usage is the set of usages the leaf lists.
	Usage Usage
	// CredentialID is [CredentialID] of the leaf.
	CredentialID string
	// Chains are the verified chains (leaf first); nil from
	// DecodeCertificate.
	Chains [][]*x509.Certificate
}

// Identity returns the identity the certificate proves: the service account,
// the pod name if any, and the credential ID.
func (c *Certificate) Identity() ksa.Identity {
	id := c.Subject.Identity()
	id.CredentialID = c.CredentialID
	return id
}

// UserInfo returns the user kube-apiserver's x509 authenticator derives from
// the certificate: the username, UID and groups of the subject and the
// credential-id extra. (kube-apiserver returns the groups in DER order and
// later adds system:authenticated; compare groups as a set.)
func (c *Certificate) UserInfo() ksa.UserInfo { return c.Identity().UserInfo() }

// DecodeCertificate reads the identity from a certificate without verifying
// its chain, and checks that the leaf has the shape of an identity
// certificate, failing closed:
//
//   - not a CA; key usage present with digital signature, and nothing but
//     key encipherment or key agreement besides; extended key usages only
//     client and/or server auth (none at all gives a zero Usage, which
//     [Verifier.Verify] refuses);
//   - a supported public key;
//   - a subject [DecodeName] accepts;
//   - SANs as [ParseCSR] accepts them; with a SPIFFE ID, both client and
//     server auth (the X509-SVID rule).
//
// Errors match [ErrInvalidCertificate], or are the decoder's errors.
func DecodeCertificate(cert *x509.Certificate) (*Certificate, error) {
	if cert == nil {
		return nil, certificateError("nil certificate", nil)
	}
	usage, err := checkLeafShape(cert)
	if err != nil {
		return nil, err
	}
	subject, err := DecodeName(cert.Subject)
	if err != nil {
		return nil, err
	}
	ips, err := checkSANs(cert.DNSNames, cert.EmailAddresses, cert.IPAddresses, len(cert.URIs))
	if err != nil {
		return nil, certificateError("subject alternative names", err)
	}
	id, err := spiffeFromURIs(cert.URIs, subject.ServiceAccount)
	if err != nil {
		return nil, certificateError("URI SAN", err)
	}
	if !id.IsZero() && usage != ClientAndServerAuth {
		return nil, certificateError("an X509-SVID must list both client and server auth", nil)
	}
	return &Certificate{
		Leaf:         cert,
		Subject:      subject,
		DNSNames:     cert.DNSNames,
		IPAddresses:  ips,
		SPIFFEID:     id,
		Usage:        usage,
		CredentialID: CredentialID(cert),
	}, nil
}

// checkLeafShape checks the CA flag, key usage, extended key usages and key
// type of a leaf and returns its usages.
func checkLeafShape(cert *x509.Certificate) (Usage, error) {
	if cert.IsCA {
		return 0, certificateError("leaf has the CA flag", nil)
	}
	const allowed = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageKeyAgreement
	if cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		return 0, certificateError("leaf key usage lacks digital signature", nil)
	}
	if cert.KeyUsage&^allowed != 0 {
		return 0, certificateError(fmt.Sprintf("leaf key usage %#x has bits beyond digital signature, key encipherment and key agreement", int(cert.KeyUsage)), nil)
	}
	if len(cert.UnknownExtKeyUsage) > 0 {
		return 0, certificateError("leaf lists extended key usage "+cert.UnknownExtKeyUsage[0].String(), nil)
	}
	var usage Usage
	for _, eku := range cert.ExtKeyUsage {
		switch eku {
		case x509.ExtKeyUsageClientAuth:
			usage |= ClientAuth
		case x509.ExtKeyUsageServerAuth:
			usage |= ServerAuth
		default:
			return 0, certificateError(fmt.Sprintf("leaf lists extended key usage %d beyond client and server auth", eku), nil)
		}
	}
	if err := checkPublicKey(cert.PublicKey); err != nil {
		return 0, certificateError("leaf key", err)
	}
	return usage, nil
}

// VerifierConfig configures a [Verifier]. Roots is required.
type VerifierConfig struct {
	// Roots are the trusted CAs (kube-apiserver's --client-ca-file, or a
	// signer's trust bundle).
	Roots *x509.CertPool
	// Intermediates, when set, are the only intermediates used. Nil means
	// the certificates presented after the leaf, as kube-apiserver does.
	Intermediates *x509.CertPool
	// Usage is the role the peer must hold: [ClientAuth] or [ServerAuth],
	// exactly one. Zero means ClientAuth. Unlike crypto/x509, which treats a
	// leaf without extended key usages as good for anything, the leaf must
	// list the usage.
	Usage Usage
	// DNSName, when set, must be a DNS name or IP address of the leaf
	// (crypto/x509's host check, for ServerAuth).
	DNSName string
	// TrustDomain, when set, requires a SPIFFE ID in this trust domain.
	// Empty accepts a certificate with or without a (valid, matching)
	// SPIFFE ID.
	TrustDomain string
	// Now returns the verification time. Nil means time.Now.
	Now func() time.Time
}

// Verifier verifies identity certificate chains. It is safe for concurrent
// use if its Now is.
type Verifier struct {
	opts VerifierConfig
	ekus []x509.ExtKeyUsage
}

// NewVerifier validates the configuration. Errors are a *ksa.ConfigError.
func NewVerifier(opts VerifierConfig) (*Verifier, error) {
	if opts.Roots == nil {
		return nil, &ksa.ConfigError{Field: "x509sa.VerifierConfig.Roots", Reason: "is required"}
	}
	if opts.Usage == 0 {
		opts.Usage = ClientAuth
	}
	if opts.Usage != ClientAuth && opts.Usage != ServerAuth {
		return nil, &ksa.ConfigError{Field: "x509sa.VerifierConfig.Usage", Reason: "must be ClientAuth or ServerAuth"}
	}
	if opts.TrustDomain != "" {
		if err := CheckTrustDomain(opts.TrustDomain); err != nil {
			return nil, &ksa.ConfigError{Field: "x509sa.VerifierConfig.TrustDomain", Reason: "is not a SPIFFE trust domain", Err: err}
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, ekus: opts.Usage.ExtKeyUsages()}, nil
}

// Verify verifies a presented chain (leaf first, at most [MaxChainLength]
// certificates) against the roots for the usage at the clock's time, then
// decodes the leaf ([DecodeCertificate]), requires the usage to be listed in
// the leaf and, with a trust domain, a SPIFFE ID in it. Chain failures match
// [ErrUntrusted] and wrap crypto/x509's error (errors.As finds
// x509.UnknownAuthorityError, x509.CertificateInvalidError, ...).
func (v *Verifier) Verify(chain []*x509.Certificate) (*Certificate, error) {
	switch {
	case len(chain) == 0:
		return nil, certificateError("empty chain", nil)
	case len(chain) > MaxChainLength:
		return nil, limit("chain certificates", len(chain), MaxChainLength)
	}
	for _, c := range chain {
		if c == nil {
			return nil, certificateError("nil certificate in chain", nil)
		}
	}
	opts := x509.VerifyOptions{
		Roots:         v.opts.Roots,
		Intermediates: v.opts.Intermediates,
		DNSName:       v.opts.DNSName,
		CurrentTime:   v.opts.Now(),
		KeyUsages:     v.ekus,
	}
	if opts.Intermediates == nil && len(chain) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range chain[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := chain[0].Verify(opts)
	if err != nil {
		return nil, wrap(ErrUntrusted, "", err)
	}
	cert, err := v.CheckLeaf(chain[0])
	if err != nil {
		return nil, err
	}
	cert.Chains = chains
	return cert, nil
}

// CheckLeaf checks a leaf whose chain was verified elsewhere, as
// crypto/tls verifies a client's chain during a handshake (the first
// certificate of a tls.ConnectionState's VerifiedChains): everything
// [Verifier.Verify] checks once the chain verifies, and nothing of the
// chain itself (neither signatures nor validity periods, nor the roots).
// It decodes the leaf ([DecodeCertificate]), requires the verifier's usage
// to be listed in it and, with a trust domain, a SPIFFE ID in it. The
// certificate returned has no Chains.
func (v *Verifier) CheckLeaf(leaf *x509.Certificate) (*Certificate, error) {
	cert, err := DecodeCertificate(leaf)
	if err != nil {
		return nil, err
	}
	if !cert.Usage.Has(v.opts.Usage) {
		return nil, certificateError("leaf does not list "+v.opts.Usage.String()+" auth", nil)
	}
	if td := v.opts.TrustDomain; td != "" && cert.SPIFFEID.TrustDomain != td {
		if cert.SPIFFEID.IsZero() {
			return nil, certificateError("no SPIFFE ID; trust domain "+td+" required", nil)
		}
		return nil, certificateError("SPIFFE ID "+cert.SPIFFEID.String()+" is not in trust domain "+td, nil)
	}
	return cert, nil
}

// certificateError reports a certificate that is not an identity leaf of
// the shape this package issues and accepts. It matches
// [ErrInvalidCertificate] and wraps cause, if any.
func certificateError(reason string, cause error) error {
	return wrap(ErrInvalidCertificate, "certificate: "+reason, cause)
}
