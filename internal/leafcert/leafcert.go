// Package leafcert encodes and signs end-entity certificates: the bytes
// crypto/x509.CreateCertificate writes for the same fields, for the fields
// ksa's issuers use. It differs in one way: CreateCertificate verifies
// every signature it gets back; an Issuer verifies a signer's signature
// once when it is built and then on every certificate only for signers
// whose implementation it does not know (a KMS, an HSM). A key of
// crypto/ecdsa, crypto/ed25519 or crypto/rsa is copied when the Issuer is
// built, its public half derived again from the private half (RSA: the
// key validated and its CRT values computed afresh), and the copy signs a
// probe that must verify against the CA certificate: from then on its
// signatures are valid by construction (crypto/rsa also checks each one
// itself), whatever the caller later does to its own key value, and
// verifying each again would cost a P-256 verification (three signatures'
// worth) per certificate.
package leafcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"time"

	"github.com/ksa-go/ksa/internal/ownkey"
)

// Template is what an issued leaf holds.
type Template struct {
	// Serial is the serial number, positive.
	Serial *big.Int
	// Subject is the DER of the subject Name, non-empty.
	Subject []byte
	// NotBefore and NotAfter bound the validity; sub-second parts are
	// dropped, as DER times hold whole seconds.
	NotBefore, NotAfter time.Time
	// PublicKey is the certified key (RSA, ECDSA or Ed25519).
	PublicKey crypto.PublicKey
	// KeyUsage is written as a critical extension when not zero.
	KeyUsage x509.KeyUsage
	// ExtKeyUsage is written when not empty; only client and server
	// authentication are known.
	ExtKeyUsage []x509.ExtKeyUsage
	// DNSNames, IPAddresses and URIs are the subject alternative names.
	DNSNames    []string
	IPAddresses []net.IP
	URIs        []*url.URL
}

// knownKeyUsages are the key usage bits RFC 5280 defines, digitalSignature
// to decipherOnly.
const knownKeyUsages = x509.KeyUsageDecipherOnly<<1 - 1

// Issuer signs leaves with one CA key. It is safe for concurrent use if
// its signer is.
type Issuer struct {
	ca     *x509.Certificate
	key    crypto.Signer
	alg    x509.SignatureAlgorithm
	algID  []byte
	opts   crypto.SignerOpts
	verify bool
}

// New returns an Issuer for the CA certificate and its key: the key's
// public half must be the certificate's, and a probe signature drawn with
// random must verify against the certificate. Keys of crypto/ecdsa,
// crypto/ed25519 and crypto/rsa are copied (see the package comment).
func New(ca *x509.Certificate, key crypto.Signer, random io.Reader) (*Issuer, error) {
	if ca == nil || key == nil {
		return nil, errors.New("a CA certificate and its key are required")
	}
	if len(ca.RawSubject) == 0 {
		return nil, errors.New("the CA certificate has no encoded subject (parse it with x509.ParseCertificate)")
	}
	key, known, err := ownkey.Copy(key)
	if err != nil {
		return nil, fmt.Errorf("the CA key: %w", err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(ca.PublicKey) {
		return nil, errors.New("the key is not the CA certificate's")
	}
	is := &Issuer{ca: ca, key: key, verify: true}
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			is.alg, is.opts, is.algID = x509.ECDSAWithSHA256, crypto.SHA256, algorithmID(oidECDSAWithSHA256, false)
		case elliptic.P384():
			is.alg, is.opts, is.algID = x509.ECDSAWithSHA384, crypto.SHA384, algorithmID(oidECDSAWithSHA384, false)
		case elliptic.P521():
			is.alg, is.opts, is.algID = x509.ECDSAWithSHA512, crypto.SHA512, algorithmID(oidECDSAWithSHA512, false)
		default:
			return nil, errors.New("unsupported ECDSA curve " + k.Curve.Params().Name)
		}
	case *rsa.PublicKey:
		is.alg, is.opts, is.algID = x509.SHA256WithRSA, crypto.SHA256, algorithmID(oidSHA256WithRSA, true)
	case ed25519.PublicKey:
		is.alg, is.opts, is.algID = x509.PureEd25519, crypto.Hash(0), algorithmID(oidEd25519, false)
	default:
		return nil, fmt.Errorf("unsupported CA key type %T", k)
	}
	probe := []byte("ksa leafcert probe")
	sig, err := crypto.SignMessage(key, random, probe, is.opts)
	if err != nil {
		return nil, fmt.Errorf("the CA key cannot sign: %w", err)
	}
	if err := ca.CheckSignature(is.alg, probe, sig); err != nil {
		return nil, fmt.Errorf("the CA key's signature does not verify against the CA certificate: %w", err)
	}
	is.verify = !known
	return is, nil
}

// Verifies reports whether every signature is verified before a
// certificate is returned: true for any signer other than a key of
// crypto/ecdsa, crypto/ed25519 or crypto/rsa.
func (is *Issuer) Verifies() bool { return is.verify }

// Issue encodes t, signs it with random and returns the certificate's DER.
func (is *Issuer) Issue(random io.Reader, t *Template) ([]byte, error) {
	if t.Serial == nil || t.Serial.Sign() <= 0 {
		return nil, errors.New("the serial number must be positive")
	}
	if len(t.Subject) == 0 {
		return nil, errors.New("the subject is required")
	}
	for _, at := range []time.Time{t.NotBefore, t.NotAfter} {
		if y := at.UTC().Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("the year %d cannot be written in a certificate (0 to 9999)", y)
		}
	}
	if unknown := t.KeyUsage &^ knownKeyUsages; unknown != 0 {
		return nil, fmt.Errorf("unknown key usage bits %#x", uint(unknown))
	}
	switch t.PublicKey.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("unsupported public key type %T", t.PublicKey)
	}
	spki, err := x509.MarshalPKIXPublicKey(t.PublicKey)
	if err != nil {
		return nil, err
	}
	exts, err := is.extensions(t)
	if err != nil {
		return nil, err
	}
	b := builder{buf: make([]byte, 0, 256+len(t.Subject)+len(is.ca.RawSubject)+len(spki)+len(exts))}
	tbs := b.seq(func() {
		b.tlv(0xa0, func() { b.integer(big.NewInt(2)) })
		b.integer(t.Serial)
		b.bytes(is.algID)
		b.bytes(is.ca.RawSubject)
		b.seq(func() {
			b.time(t.NotBefore)
			b.time(t.NotAfter)
		})
		b.bytes(t.Subject)
		b.bytes(spki)
		b.tlv(0xa3, func() { b.bytes(exts) })
	})
	sig, err := crypto.SignMessage(is.key, random, tbs, is.opts)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	if is.verify {
		if err := is.ca.CheckSignature(is.alg, tbs, sig); err != nil {
			return nil, fmt.Errorf("the signer's signature does not verify: %w", err)
		}
	}
	out := builder{buf: make([]byte, 0, len(tbs)+len(is.algID)+len(sig)+16)}
	return out.seq(func() {
		out.bytes(tbs)
		out.bytes(is.algID)
		out.bitString(sig)
	}), nil
}

// extensions encodes the extension list in the order CreateCertificate
// writes it: key usage, extended key usage, basic constraints, authority
// key ID, subject alternative names.
func (is *Issuer) extensions(t *Template) ([]byte, error) {
	b := builder{buf: make([]byte, 0, 256)}
	var failed error
	out := b.seq(func() {
		if t.KeyUsage != 0 {
			b.extension(oidKeyUsage, true, func() { b.keyUsage(t.KeyUsage) })
		}
		if len(t.ExtKeyUsage) > 0 {
			b.extension(oidExtKeyUsage, false, func() {
				b.seq(func() {
					for _, u := range t.ExtKeyUsage {
						switch u {
						case x509.ExtKeyUsageServerAuth:
							b.raw(oidServerAuth)
						case x509.ExtKeyUsageClientAuth:
							b.raw(oidClientAuth)
						default:
							failed = cmp(failed, fmt.Errorf("unsupported extended key usage %d", u))
						}
					}
				})
			})
		}
		b.extension(oidBasicConstraints, true, func() { b.seq(func() {}) })
		if len(is.ca.SubjectKeyId) > 0 && string(is.ca.RawSubject) != string(t.Subject) {
			b.extension(oidAuthorityKeyID, false, func() {
				b.seq(func() { b.tlv(0x80, func() { b.bytes(is.ca.SubjectKeyId) }) })
			})
		}
		if len(t.DNSNames) > 0 || len(t.IPAddresses) > 0 || len(t.URIs) > 0 {
			// RFC 5280 makes the names critical when the subject is empty.
			b.extension(oidSubjectAltName, string(t.Subject) == "\x30\x00", func() {
				b.seq(func() {
					for _, name := range t.DNSNames {
						failed = cmp(failed, ia5(name))
						b.tlv(0x82, func() { b.bytes([]byte(name)) })
					}
					for _, ip := range t.IPAddresses {
						if v4 := ip.To4(); v4 != nil {
							ip = v4
						}
						if len(ip) != net.IPv4len && len(ip) != net.IPv6len {
							failed = cmp(failed, fmt.Errorf("invalid IP address of %d bytes", len(ip)))
						}
						b.tlv(0x87, func() { b.bytes(ip) })
					}
					for _, u := range t.URIs {
						s := u.String()
						failed = cmp(failed, ia5(s))
						b.tlv(0x86, func() { b.bytes([]byte(s)) })
					}
				})
			})
		}
	})
	return out, failed
}

// cmp keeps the first error.
func cmp(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// ia5 refuses a name that is not ASCII, as IA5String holds only ASCII.
func ia5(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return fmt.Errorf("%q is not an IA5String (ASCII only)", s)
		}
	}
	return nil
}
