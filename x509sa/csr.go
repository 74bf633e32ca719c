package x509sa

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"

	"github.com/ksa-go/ksa"
)

// CSRPEMType is the PEM block type of a certificate request, the only one
// Kubernetes accepts in spec.request.
const CSRPEMType = "CERTIFICATE REQUEST"

// CSROptions says what a certificate request asks for. The zero value is not
// usable: Subject is required.
type CSROptions struct {
	// Subject is the identity to encode (see [Subject]).
	Subject Subject
	// Usage is what the certificate is for. Zero means [ClientAuth].
	Usage Usage
	// Hosts are the serve hosts (DNS names and IP addresses, see
	// [SplitHosts]) the certificate is valid for; they need [ServerAuth].
	// Nil means none.
	Hosts []string
	// TrustDomain, when set, adds the URI SAN
	// spiffe://<TrustDomain>/ns/<namespace>/sa/<name>, making the
	// certificate an X509-SVID as well; that needs [ClientAndServerAuth].
	// Empty means no SPIFFE ID.
	TrustDomain string
}

// CreateCSR builds a DER certificate request signed by key. The request
// carries the subject of opts.Subject, the serve hosts as DNS and IP SANs,
// the SPIFFE ID as a URI SAN, and asks (in its extension request) for the
// key usage digital signature (plus key encipherment for RSA keys) and the
// extended key usages of opts.Usage, which [Issuer.Issue] honours. RSA keys
// sign with SHA-256, SHA-384 or SHA-512 by modulus size, as client-go does.
//
// random nil means crypto/rand.Reader. The key must be RSA 2048-8192 bits,
// ECDSA P-256/P-384/P-521 or Ed25519 (else the error matches
// jwks.ErrUnsupportedKey). Other errors match [ErrInvalidSubject],
// [ErrInvalidUsage], [ErrInvalidHost], [ErrLimit] or [ErrInvalidSPIFFEID],
// or are a *ksa.ConfigError for a nil key.
func CreateCSR(random io.Reader, key crypto.Signer, opts CSROptions) ([]byte, error) {
	if key == nil {
		return nil, &ksa.ConfigError{Field: "x509sa.key", Reason: "is required"}
	}
	pub := key.Public()
	if err := checkPublicKey(pub); err != nil {
		return nil, err
	}
	name, err := opts.Subject.Name()
	if err != nil {
		return nil, err
	}
	usage := opts.Usage
	if usage == 0 {
		usage = ClientAuth
	}
	if !usage.valid() {
		return nil, usageError(usage.String(), "unknown usage bits")
	}
	dnsNames, ips, err := SplitHosts(opts.Hosts)
	if err != nil {
		return nil, err
	}
	var uris []*url.URL
	if opts.TrustDomain != "" {
		id, err := NewSPIFFEID(opts.TrustDomain, opts.Subject.ServiceAccount)
		if err != nil {
			return nil, err
		}
		uris = []*url.URL{id.URL()}
	}
	if uerr := checkUsageShape(usage, len(dnsNames)+len(ips), len(uris) > 0); uerr != nil {
		return nil, uerr
	}
	exts, err := requestedExtensions(keyUsageFor(pub), usage)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.CertificateRequest{
		Subject:            name,
		DNSNames:           dnsNames,
		IPAddresses:        toNetIPs(ips),
		URIs:               uris,
		ExtraExtensions:    exts,
		SignatureAlgorithm: signatureAlgorithm(pub),
	}
	if random == nil {
		random = rand.Reader
	}
	der, err := x509.CreateCertificateRequest(random, tmpl, key)
	if err != nil {
		return nil, wrap(ErrSigning, "creating the certificate request", err)
	}
	return der, nil
}

// EncodeCSRPEM wraps a DER request in a CERTIFICATE REQUEST PEM block, the
// form of a CertificateSigningRequest's spec.request.
func EncodeCSRPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: CSRPEMType, Bytes: der})
}

// DecodeCSRPEM returns the DER of a PEM certificate request: at most
// [MaxCSRPEMSize] bytes holding exactly one CERTIFICATE REQUEST block, with
// no headers and nothing but white space
// around it. Errors match [ErrMalformedCSR] or [ErrLimit].
func DecodeCSRPEM(data []byte) ([]byte, error) {
	if len(data) > MaxCSRPEMSize {
		return nil, limit("CSR PEM bytes", len(data), MaxCSRPEMSize)
	}
	if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("-----BEGIN ")) {
		return nil, csrError("data before the PEM block", nil)
	}
	block, rest := pem.Decode(data)
	switch {
	case block == nil:
		return nil, csrError("no PEM block", nil)
	case block.Type != CSRPEMType:
		return nil, csrError(fmt.Sprintf("PEM block type must be %s, not %q", CSRPEMType, block.Type), nil)
	case len(block.Headers) > 0:
		return nil, csrError("PEM headers are not allowed", nil)
	case len(bytes.TrimSpace(rest)) > 0:
		return nil, csrError("data after the PEM block", nil)
	}
	return block.Bytes, nil
}

// CSR is a parsed, checked certificate request for an identity certificate.
// Values come from [ParseCSR]; the fields are for reading (changing them does
// not change what [Issuer.Issue] signs, which parses the DER itself).
type CSR struct {
	// Subject is the decoded identity.
	Subject Subject
	// DNSNames and IPAddresses are the requested serve hosts.
	DNSNames    []string
	IPAddresses []netip.Addr
	// SPIFFEID is the requested SPIFFE ID; zero when none.
	SPIFFEID SPIFFEID
	// Usage is what the request's extension request asks for; zero when it
	// asks for no extended key usage (requests made by other tools).
	Usage Usage
	// PublicKey is the requester's key.
	PublicKey crypto.PublicKey

	req *x509.CertificateRequest
}

// Raw returns the request's DER. Callers MUST NOT modify it.
func (c *CSR) Raw() []byte { return c.req.Raw }

// Hosts returns the DNS names and then the IP addresses, as strings.
func (c *CSR) Hosts() []string {
	out := make([]string, 0, len(c.DNSNames)+len(c.IPAddresses))
	out = append(out, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// ParseCSRPEM is [DecodeCSRPEM] followed by [ParseCSR].
func ParseCSRPEM(data []byte) (*CSR, error) {
	der, err := DecodeCSRPEM(data)
	if err != nil {
		return nil, err
	}
	return ParseCSR(der)
}

// ParseCSR parses and checks a DER certificate request, failing closed:
//
//   - at most [MaxCSRSize] bytes ([ErrLimit]);
//   - parseable ([ErrMalformedCSR] wrapping crypto/x509's error), with a
//     supported key (jwks.ErrUnsupportedKey) and a valid self-signature
//     ([ErrMalformedCSR]);
//   - a subject [DecodeName] accepts;
//   - SANs: at most [MaxSANs]; DNS names and IP addresses as [SplitHosts]
//     would write them; no e-mail addresses ([ErrInvalidHost]); at most one
//     URI, a SPIFFE ID naming the subject's service account
//     ([ErrInvalidSPIFFEID]);
//   - requested extensions: only subject alternative names, key usage
//     (digital signature required; key encipherment and key agreement
//     allowed), extended key usage (client and/or server auth only) and
//     basic constraints without the CA flag; anything else, or the same
//     extension twice, is ErrMalformedCSR;
//   - if usages are requested: hosts need ServerAuth, a SPIFFE ID needs
//     both ([ErrInvalidUsage]).
func ParseCSR(der []byte) (*CSR, error) {
	if len(der) > MaxCSRSize {
		return nil, limit("CSR bytes", len(der), MaxCSRSize)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return nil, csrError("does not parse", err)
	}
	if err := checkPublicKey(req.PublicKey); err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, csrError("self-signature does not verify", err)
	}
	subject, err := DecodeName(req.Subject)
	if err != nil {
		return nil, err
	}
	usage, err := parseRequestedExtensions(req.Extensions)
	if err != nil {
		return nil, err
	}
	ips, err := checkSANs(req.DNSNames, req.EmailAddresses, req.IPAddresses, len(req.URIs))
	if err != nil {
		return nil, err
	}
	id, err := spiffeFromURIs(req.URIs, subject.ServiceAccount)
	if err != nil {
		return nil, err
	}
	if usage != 0 {
		if uerr := checkUsageShape(usage, len(req.DNSNames)+len(ips), !id.IsZero()); uerr != nil {
			return nil, uerr
		}
	}
	return &CSR{
		Subject:     subject,
		DNSNames:    req.DNSNames,
		IPAddresses: ips,
		SPIFFEID:    id,
		Usage:       usage,
		PublicKey:   req.PublicKey,
		req:         req,
	}, nil
}

// Extension OIDs a request may ask for.
func isSANExt(oid asn1.ObjectIdentifier) bool { return oidIs(oid, 2, 5, 29, 17) }
func isKUExt(oid asn1.ObjectIdentifier) bool  { return oidIs(oid, 2, 5, 29, 15) }
func isEKUExt(oid asn1.ObjectIdentifier) bool { return oidIs(oid, 2, 5, 29, 37) }
func isBCExt(oid asn1.ObjectIdentifier) bool  { return oidIs(oid, 2, 5, 29, 19) }

func isClientAuthOID(oid asn1.ObjectIdentifier) bool { return oidIs(oid, 1, 3, 6, 1, 5, 5, 7, 3, 2) }
func isServerAuthOID(oid asn1.ObjectIdentifier) bool { return oidIs(oid, 1, 3, 6, 1, 5, 5, 7, 3, 1) }

// requestedExtensions builds the key-usage (critical, as RFC 5280 asks) and
// extended-key-usage extensions a request asks for.
func requestedExtensions(ku x509.KeyUsage, u Usage) ([]pkix.Extension, error) {
	// KeyUsage is a named BIT STRING: bit 0 (digital signature) is the most
	// significant bit of the first byte; DER drops trailing zero bits.
	var b byte
	bitLen := 0
	for i := 0; i < 8; i++ {
		if ku&(1<<i) != 0 {
			b |= 0x80 >> i
			bitLen = i + 1
		}
	}
	kuDER, err := asn1.Marshal(asn1.BitString{Bytes: []byte{b}, BitLength: bitLen})
	if err != nil {
		return nil, err
	}
	var oids []asn1.ObjectIdentifier
	if u.Has(ClientAuth) {
		oids = append(oids, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2})
	}
	if u.Has(ServerAuth) {
		oids = append(oids, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 1})
	}
	ekuDER, err := asn1.Marshal(oids)
	if err != nil {
		return nil, err
	}
	return []pkix.Extension{
		{Id: asn1.ObjectIdentifier{2, 5, 29, 15}, Critical: true, Value: kuDER},
		{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Value: ekuDER},
	}, nil
}

// parseRequestedExtensions checks a request's extensions and returns the
// usages it asks for (zero when it asks for no extended key usage).
func parseRequestedExtensions(exts []pkix.Extension) (Usage, error) {
	var usage Usage
	var seenSAN, seenKU, seenEKU, seenBC bool
	once := func(seen *bool, what string) error {
		if *seen {
			return csrError(fmt.Sprintf("%s requested twice", what), nil)
		}
		*seen = true
		return nil
	}
	for _, e := range exts {
		switch {
		case isSANExt(e.Id):
			if err := once(&seenSAN, "subject alternative names"); err != nil {
				return 0, err
			}
		case isKUExt(e.Id):
			if err := once(&seenKU, "key usage"); err != nil {
				return 0, err
			}
			var bits asn1.BitString
			if rest, err := asn1.Unmarshal(e.Value, &bits); err != nil || len(rest) > 0 {
				return 0, csrError("malformed key usage request", nil)
			}
			var ku x509.KeyUsage
			for i := 0; i < bits.BitLength; i++ {
				if bits.At(i) != 0 {
					if i > 8 {
						return 0, usageError(strconv.Quote("key usage bit "+strconv.Itoa(i)), "not a key usage of identity certificates")
					}
					ku |= 1 << i
				}
			}
			if ku&^(x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment|x509.KeyUsageKeyAgreement) != 0 {
				return 0, usageError(strconv.Quote(fmt.Sprintf("key usage %#x", int(ku))), "only digital signature, key encipherment and key agreement may be requested")
			}
			if ku&x509.KeyUsageDigitalSignature == 0 {
				return 0, usageError(strconv.Quote(fmt.Sprintf("key usage %#x", int(ku))), "digital signature must be requested")
			}
		case isEKUExt(e.Id):
			if err := once(&seenEKU, "extended key usage"); err != nil {
				return 0, err
			}
			var oids []asn1.ObjectIdentifier
			if rest, err := asn1.Unmarshal(e.Value, &oids); err != nil || len(rest) > 0 {
				return 0, csrError("malformed extended key usage request", nil)
			}
			for _, oid := range oids {
				var u Usage
				switch {
				case isClientAuthOID(oid):
					u = ClientAuth
				case isServerAuthOID(oid):
					u = ServerAuth
				default:
					return 0, usageError(strconv.Quote(oid.String()), "only client and server auth may be requested")
				}
				if usage.Has(u) {
					return 0, usageError(strconv.Quote(oid.String()), "duplicate extended key usage")
				}
				usage |= u
			}
			if usage == 0 {
				return 0, usageError(Usage(0).String(), "empty extended key usage request")
			}
		case isBCExt(e.Id):
			if err := once(&seenBC, "basic constraints"); err != nil {
				return 0, err
			}
			var bc struct {
				IsCA       bool `asn1:"optional"`
				MaxPathLen int  `asn1:"optional,default:-1"`
			}
			if rest, err := asn1.Unmarshal(e.Value, &bc); err != nil || len(rest) > 0 {
				return 0, csrError("malformed basic constraints request", nil)
			}
			if bc.IsCA {
				return 0, csrError("requests a CA certificate", nil)
			}
		default:
			return 0, csrError(fmt.Sprintf("extension %s may not be requested", e.Id), nil)
		}
	}
	return usage, nil
}

// csrError reports a certificate request that cannot be used. It matches
// [ErrMalformedCSR] and wraps cause (crypto/x509's error), if any.
func csrError(reason string, cause error) error {
	return wrap(ErrMalformedCSR, "certificate request: "+reason, cause)
}
