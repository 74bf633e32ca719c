package x509sa

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every rejection matches one of them with [errors.Is]; the
// typed errors below carry the data a caller acts on and match their
// sentinel.
var (
	// ErrInvalidSubject: a subject does not carry a valid service-account
	// identity, or an identity cannot be encoded. See [SubjectError].
	ErrInvalidSubject = errors.New("x509sa: invalid identity subject")
	// ErrNotServiceAccount: the subject has no common name, or one that is
	// not a service-account username at all. Kubernetes would authenticate
	// such a certificate as some other user (or, without a common name, not
	// at all); a union of authenticators may move on. It is always wrapped
	// by a [SubjectError], so it also matches [ErrInvalidSubject].
	ErrNotServiceAccount = errors.New("x509sa: subject is not a service account")
	// ErrInvalidExtension: a caller extension is not a valid key=value
	// string. See [ExtensionError].
	ErrInvalidExtension = errors.New("x509sa: invalid subject extension")
	// ErrReservedExtension: an extension, or an organizational unit read
	// from a subject, uses the reserved "system:" prefix without being one
	// of the entries this package writes. It also matches
	// [ErrInvalidExtension].
	ErrReservedExtension = errors.New("x509sa: reserved subject extension")
	// ErrLimit: an input is over one of the documented size limits
	// ([MaxSubjectAttributes], [MaxExtensions], [MaxSANs], ...). See
	// [LimitError].
	ErrLimit = errors.New("x509sa: size limit exceeded")
	// ErrInvalidHost: a serve host is neither an IP address nor a DNS name
	// this package accepts. See [HostError].
	ErrInvalidHost = errors.New("x509sa: invalid host")
	// ErrUnsupportedKey: a key is not RSA 2048-8192, ECDSA P-256/P-384/
	// P-521 or Ed25519. See [KeyError].
	ErrUnsupportedKey = errors.New("x509sa: unsupported key")
	// ErrMalformedCSR: a certificate request is not one strict PEM block,
	// not parseable DER, or requests extensions this package refuses.
	ErrMalformedCSR = errors.New("x509sa: malformed certificate request")
	// ErrCSRSignature: a certificate request's self-signature does not
	// verify.
	ErrCSRSignature = errors.New("x509sa: certificate request signature invalid")
	// ErrInvalidUsage: usages are unknown, missing, inconsistent or not
	// allowed. See [UsageError].
	ErrInvalidUsage = errors.New("x509sa: invalid usage")
	// ErrInvalidSignerName: a signer name Kubernetes would refuse, or one
	// that cannot sign a service-account identity. See [SignerNameError].
	ErrInvalidSignerName = errors.New("x509sa: invalid signer name")
	// ErrRequesterMismatch: a certificate request asks for an identity its
	// requester does not have. See [MismatchError].
	ErrRequesterMismatch = errors.New("x509sa: request does not match its requester")
	// ErrNotAllowed: an approver's policy refused part of a request (an
	// extension, a host, a SPIFFE ID). See [PolicyError].
	ErrNotAllowed = errors.New("x509sa: not allowed by policy")
	// ErrInvalidSPIFFEID: a SPIFFE ID or trust domain breaks the SPIFFE ID
	// rules, or names another service account. See [SPIFFEIDError].
	ErrInvalidSPIFFEID = errors.New("x509sa: invalid SPIFFE ID")
	// ErrLifetime: no certificate lifetime satisfies the bounds, or the
	// issuing CA is not valid now. See [LifetimeError].
	ErrLifetime = errors.New("x509sa: certificate lifetime out of bounds")
	// ErrInvalidCertificate: a certificate is not shaped like an identity
	// leaf (CA flag, key usages, SANs). See [CertificateError].
	ErrInvalidCertificate = errors.New("x509sa: invalid identity certificate")
	// ErrUntrusted: the chain does not verify against the roots for the
	// usage; the crypto/x509 error is wrapped beside it.
	ErrUntrusted = errors.New("x509sa: certificate not trusted")
	// ErrInvalidOptions: a constructor or function got options it cannot
	// use. See [OptionsError].
	ErrInvalidOptions = errors.New("x509sa: invalid options")
)

// SubjectError reports a subject attribute that does not carry, or cannot
// encode, a valid identity. It matches [ErrInvalidSubject]; Err, when set, is
// the cause ([ErrNotServiceAccount], a *ksa.UsernameError, a *ksa.NameError,
// an [ExtensionError], ...).
type SubjectError struct {
	// Attribute names the attribute: "CN", "O", "OU", "UID", "pod", or the
	// dotted OID of an attribute this package does not accept.
	Attribute string
	// Value is the offending value, when there is one.
	Value string
	// Reason says what is wrong.
	Reason string
	Err    error
}

func (e *SubjectError) Error() string {
	var b strings.Builder
	b.WriteString("x509sa: subject ")
	b.WriteString(e.Attribute)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is [ErrInvalidSubject].
func (e *SubjectError) Is(target error) bool { return target == ErrInvalidSubject }

// Unwrap returns the cause.
func (e *SubjectError) Unwrap() error { return e.Err }

// ExtensionError reports a caller extension, or an organizational unit read
// from a subject, that is not acceptable. It matches [ErrInvalidExtension],
// and [ErrReservedExtension] when Reserved is set.
type ExtensionError struct {
	// Extension is the offending key=value string (or key, when encoding).
	Extension string
	// Reserved is set when the extension tries the reserved "system:"
	// prefix: an attempt to forge an entry this package writes.
	Reserved bool
	Reason   string
}

func (e *ExtensionError) Error() string {
	return fmt.Sprintf("x509sa: extension %q: %s", e.Extension, e.Reason)
}

// Is reports whether target is [ErrInvalidExtension], or
// [ErrReservedExtension] for a reserved one.
func (e *ExtensionError) Is(target error) bool {
	return target == ErrInvalidExtension || (e.Reserved && target == ErrReservedExtension)
}

// LimitError reports an input over a documented limit. It matches
// [ErrLimit].
type LimitError struct {
	// What names the limited quantity ("subject attributes", "extensions",
	// "SANs", "CSR bytes", ...).
	What  string
	Size  int
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("x509sa: %d %s is over the limit of %d", e.Size, e.What, e.Limit)
}

// Is reports whether target is [ErrLimit].
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// HostError reports a serve host or SAN that is refused. It matches
// [ErrInvalidHost].
type HostError struct {
	Host   string
	Reason string
}

func (e *HostError) Error() string {
	return fmt.Sprintf("x509sa: host %q: %s", e.Host, e.Reason)
}

// Is reports whether target is [ErrInvalidHost].
func (e *HostError) Is(target error) bool { return target == ErrInvalidHost }

// KeyError reports a key of an unsupported type or size. It matches
// [ErrUnsupportedKey].
type KeyError struct {
	// Key describes the key: "RSA-1024", "ECDSA P-224", "DSA", ...
	Key string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("x509sa: key %s is not supported (want RSA %d-%d bits, ECDSA P-256/P-384/P-521 or Ed25519)", e.Key, MinRSABits, MaxRSABits)
}

// Is reports whether target is [ErrUnsupportedKey].
func (e *KeyError) Is(target error) bool { return target == ErrUnsupportedKey }

// UsageError reports usages that are unknown, missing, inconsistent with each
// other or with the request, or not allowed. It matches [ErrInvalidUsage].
type UsageError struct {
	// Usage is the usage in question (zero when none was found).
	Usage Usage
	// Value is the offending Kubernetes usage string or EKU, when there is
	// one.
	Value  string
	Reason string
}

func (e *UsageError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("x509sa: usage %q: %s", e.Value, e.Reason)
	}
	return fmt.Sprintf("x509sa: usage %s: %s", e.Usage, e.Reason)
}

// Is reports whether target is [ErrInvalidUsage].
func (e *UsageError) Is(target error) bool { return target == ErrInvalidUsage }

// SignerNameError reports a signer name that Kubernetes would refuse or that
// cannot issue service-account certificates. It matches
// [ErrInvalidSignerName].
type SignerNameError struct {
	SignerName string
	Reason     string
}

func (e *SignerNameError) Error() string {
	return fmt.Sprintf("x509sa: signer name %q: %s", e.SignerName, e.Reason)
}

// Is reports whether target is [ErrInvalidSignerName].
func (e *SignerNameError) Is(target error) bool { return target == ErrInvalidSignerName }

// MismatchError reports a field where the identity a request asks for and
// the requester's own identity differ. It matches [ErrRequesterMismatch].
type MismatchError struct {
	// Field is "username", "groups", "uid" or "pod-name".
	Field string
	// Want is what the request's subject requires; Got is what the
	// requester has.
	Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("x509sa: requester %s is %q, the requested subject needs %q", e.Field, e.Got, e.Want)
}

// Is reports whether target is [ErrRequesterMismatch].
func (e *MismatchError) Is(target error) bool { return target == ErrRequesterMismatch }

// PolicyError reports a part of a request an approver's policy refused. It
// matches [ErrNotAllowed].
type PolicyError struct {
	// What is "extension", "host" or "SPIFFE ID".
	What  string
	Value string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("x509sa: %s %q is not allowed", e.What, e.Value)
}

// Is reports whether target is [ErrNotAllowed].
func (e *PolicyError) Is(target error) bool { return target == ErrNotAllowed }

// SPIFFEIDError reports an invalid SPIFFE ID or trust domain. It matches
// [ErrInvalidSPIFFEID].
type SPIFFEIDError struct {
	ID     string
	Reason string
}

func (e *SPIFFEIDError) Error() string {
	return fmt.Sprintf("x509sa: SPIFFE ID %q: %s", e.ID, e.Reason)
}

// Is reports whether target is [ErrInvalidSPIFFEID].
func (e *SPIFFEIDError) Is(target error) bool { return target == ErrInvalidSPIFFEID }

// LifetimeError reports a certificate lifetime outside the bounds. It
// matches [ErrLifetime].
type LifetimeError struct {
	// Lifetime is the lifetime that would have been issued (zero when the
	// CA itself is not valid now).
	Lifetime time.Duration
	// Min and Max are the issuer's bounds.
	Min, Max time.Duration
	Reason   string
}

func (e *LifetimeError) Error() string {
	return fmt.Sprintf("x509sa: lifetime %v (bounds [%v, %v]): %s", e.Lifetime, e.Min, e.Max, e.Reason)
}

// Is reports whether target is [ErrLifetime].
func (e *LifetimeError) Is(target error) bool { return target == ErrLifetime }

// CertificateError reports a certificate that is not an identity leaf of the
// shape this package issues and accepts. It matches [ErrInvalidCertificate];
// Err, when set, is the cause (a [HostError], [SPIFFEIDError], ...).
type CertificateError struct {
	Reason string
	Err    error
}

func (e *CertificateError) Error() string {
	if e.Err != nil {
		return "x509sa: certificate: " + e.Reason + ": " + e.Err.Error()
	}
	return "x509sa: certificate: " + e.Reason
}

// Is reports whether target is [ErrInvalidCertificate].
func (e *CertificateError) Is(target error) bool { return target == ErrInvalidCertificate }

// Unwrap returns the cause.
func (e *CertificateError) Unwrap() error { return e.Err }

// OptionsError reports an option a constructor or function cannot use. It
// matches [ErrInvalidOptions].
type OptionsError struct {
	// Field names the option.
	Field  string
	Reason string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("x509sa: option %s: %s", e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidOptions].
func (e *OptionsError) Is(target error) bool { return target == ErrInvalidOptions }
