package x509sa

import (
	"fmt"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// Sentinel errors. Every rejection matches one of them with [errors.Is]; the
// typed errors below carry the data a caller acts on and match their
// sentinel.
var (
	// ErrInvalidSubject: a subject does not carry a valid service-account
	// identity, or an identity cannot be encoded. See [SubjectError].
	ErrInvalidSubject = errs.New(prefix, "invalid identity subject")
	// ErrNotServiceAccount: the subject has no common name, or one that is
	// not a service-account username at all. Kubernetes would authenticate
	// such a certificate as some other user (or, without a common name, not
	// at all); a union of authenticators may move on. It is always wrapped
	// by a [SubjectError], so it also matches [ErrInvalidSubject].
	ErrNotServiceAccount = errs.New(prefix, "subject is not a service account")
	// ErrInvalidExtension: a caller extension is not a valid key=value
	// string. See [ExtensionError].
	ErrInvalidExtension = errs.New(prefix, "invalid subject extension")
	// ErrReservedExtension: an extension, or an organizational unit read
	// from a subject, uses the reserved "system:" prefix without being one
	// of the entries this package writes. It also matches
	// [ErrInvalidExtension].
	ErrReservedExtension = errs.New(prefix, "reserved subject extension")
	// ErrLimit: an input is over one of the documented size limits
	// ([MaxSubjectAttributes], [MaxExtensions], [MaxSANs], ...). See
	// [LimitError].
	ErrLimit = errs.New(prefix, "size limit exceeded")
	// ErrInvalidHost: a serve host is neither an IP address nor a DNS name
	// this package accepts. See [HostError].
	ErrInvalidHost = errs.New(prefix, "invalid host")
	// ErrMalformedCSR: a certificate request is not one strict PEM block,
	// not parseable DER, or requests extensions this package refuses. See
	// [CSRError].
	ErrMalformedCSR = errs.New(prefix, "malformed certificate request")
	// ErrCSRSignature: a certificate request's self-signature does not
	// verify. See [CSRError].
	ErrCSRSignature = errs.New(prefix, "certificate request signature invalid")
	// ErrSigning: the CA's signer failed to sign (a KMS or HSM call that
	// failed), or the random source did. See [SigningError].
	ErrSigning = errs.New(prefix, "signing failed")
	// ErrInvalidUsage: usages are unknown, missing, inconsistent or not
	// allowed. See [UsageError].
	ErrInvalidUsage = errs.New(prefix, "invalid usage")
	// ErrInvalidSignerName: a signer name Kubernetes would refuse, or one
	// that cannot sign a service-account identity. See [SignerNameError].
	ErrInvalidSignerName = errs.New(prefix, "invalid signer name")
	// ErrRequesterMismatch: a certificate request asks for an identity its
	// requester does not have. See [MismatchError].
	ErrRequesterMismatch = errs.New(prefix, "request does not match its requester")
	// ErrNotAllowed: an approver's policy refused part of a request (an
	// extension, a host, a SPIFFE ID). See [PolicyError].
	ErrNotAllowed = errs.New(prefix, "not allowed by policy")
	// ErrInvalidSPIFFEID: a SPIFFE ID or trust domain breaks the SPIFFE ID
	// rules, or names another service account. See [SPIFFEIDError].
	ErrInvalidSPIFFEID = errs.New(prefix, "invalid SPIFFE ID")
	// ErrLifetime: no certificate lifetime satisfies the bounds, or the
	// issuing CA is not valid now. See [LifetimeError].
	ErrLifetime = errs.New(prefix, "certificate lifetime out of bounds")
	// ErrInvalidCertificate: a certificate is not shaped like an identity
	// leaf (CA flag, key usages, SANs). See [CertificateError].
	ErrInvalidCertificate = errs.New(prefix, "invalid identity certificate")
	// ErrUntrusted: the chain does not verify against the roots for the
	// usage. See [TrustError], which wraps crypto/x509's error.
	ErrUntrusted = errs.New(prefix, "certificate not trusted")
	// ErrInvalidConfig: a constructor or function got options it cannot
	// use. See [ConfigError].
	ErrInvalidConfig = errs.New(prefix, "invalid options")
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
	msg := "subject " + e.Attribute
	if e.Value != "" {
		msg += fmt.Sprintf(" %q", e.Value)
	}
	return errs.Msg(prefix, msg+": "+e.Reason, e.Err)
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
	return errs.Msg(prefix, fmt.Sprintf("extension %q: %s", e.Extension, e.Reason), nil)
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
	return errs.Msg(prefix, fmt.Sprintf("%d %s is over the limit of %d", e.Size, e.What, e.Limit), nil)
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
	return errs.Msg(prefix, fmt.Sprintf("host %q: %s", e.Host, e.Reason), nil)
}

// Is reports whether target is [ErrInvalidHost].
func (e *HostError) Is(target error) bool { return target == ErrInvalidHost }

// KeyError reports a key of an unsupported type or size: the key limits
// are jwks' (jwks.CheckPublicKey: RSA of jwks.MinRSABits to jwks.MaxRSABits
// with an exponent up to jwks.MaxRSAExponent, ECDSA on P-256, P-384 or
// P-521, Ed25519). It matches jwks.ErrUnsupportedKey and wraps jwks' error.
type KeyError struct {
	// Key describes the key: "RSA 1024", "ECDSA P-224", "DSA", ...
	Key string
	Err error
}

func (e *KeyError) Error() string {
	return errs.Msg(prefix, "key "+e.Key+" is not supported", e.Err)
}

// Is reports whether target is jwks.ErrUnsupportedKey.
func (e *KeyError) Is(target error) bool { return target == jwks.ErrUnsupportedKey }

// Unwrap returns jwks' error.
func (e *KeyError) Unwrap() error { return e.Err }

// CSRError reports a certificate request that cannot be used. It matches
// [ErrMalformedCSR], or [ErrCSRSignature] for a self-signature that does
// not verify, and wraps crypto/x509's error when there is one.
type CSRError struct {
	Reason string
	// Signature is set when the self-signature does not verify.
	Signature bool
	Err       error
}

func (e *CSRError) Error() string {
	return errs.Msg(prefix, "certificate request: "+e.Reason, e.Err)
}

// Is reports whether target is [ErrMalformedCSR], or [ErrCSRSignature] for
// a bad self-signature.
func (e *CSRError) Is(target error) bool {
	if e.Signature {
		return target == ErrCSRSignature
	}
	return target == ErrMalformedCSR
}

// Unwrap returns the cause, if any.
func (e *CSRError) Unwrap() error { return e.Err }

// SigningError reports a signer or random source that failed while a
// certificate was made. It matches [ErrSigning] and wraps the cause.
type SigningError struct {
	Reason string
	Err    error
}

func (e *SigningError) Error() string { return errs.Msg(prefix, e.Reason, e.Err) }

// Is reports whether target is [ErrSigning].
func (e *SigningError) Is(target error) bool { return target == ErrSigning }

// Unwrap returns the cause, if any.
func (e *SigningError) Unwrap() error { return e.Err }

// TrustError reports a chain that does not verify for the usage. It
// matches [ErrUntrusted] and wraps crypto/x509's error.
type TrustError struct {
	Err error
}

func (e *TrustError) Error() string { return errs.Msg(prefix, "certificate not trusted", e.Err) }

// Is reports whether target is [ErrUntrusted].
func (e *TrustError) Is(target error) bool { return target == ErrUntrusted }

// Unwrap returns crypto/x509's error.
func (e *TrustError) Unwrap() error { return e.Err }

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
		return errs.Msg(prefix, fmt.Sprintf("usage %q: %s", e.Value, e.Reason), nil)
	}
	return errs.Msg(prefix, fmt.Sprintf("usage %s: %s", e.Usage, e.Reason), nil)
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
	return errs.Msg(prefix, fmt.Sprintf("signer name %q: %s", e.SignerName, e.Reason), nil)
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
	return errs.Msg(prefix, fmt.Sprintf("requester %s is %q, the requested subject needs %q", e.Field, e.Got, e.Want), nil)
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
	return errs.Msg(prefix, fmt.Sprintf("%s %q is not allowed", e.What, e.Value), nil)
}

// Is reports whether target is [ErrNotAllowed].
func (e *PolicyError) Is(target error) bool { return target == ErrNotAllowed }

// SPIFFEIDError reports an invalid SPIFFE ID or trust domain. It matches
// [ErrInvalidSPIFFEID]; Err, when set, is the cause (a *ksa.NameError for
// a service account that is not valid).
type SPIFFEIDError struct {
	ID     string
	Reason string
	Err    error
}

func (e *SPIFFEIDError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("SPIFFE ID %q: %s", e.ID, e.Reason), e.Err)
}

// Unwrap returns the cause, if any.
func (e *SPIFFEIDError) Unwrap() error { return e.Err }

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
	return errs.Msg(prefix, fmt.Sprintf("lifetime %v (bounds [%v, %v]): %s", e.Lifetime, e.Min, e.Max, e.Reason), nil)
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
	return errs.Msg(prefix, "certificate: "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidCertificate].
func (e *CertificateError) Is(target error) bool { return target == ErrInvalidCertificate }

// Unwrap returns the cause.
func (e *CertificateError) Unwrap() error { return e.Err }

// ConfigError reports an option a constructor or function cannot use. It
// matches [ErrInvalidConfig].
type ConfigError struct {
	// Field names the option.
	Field  string
	Reason string
	// Err is the cause, if any.
	Err error
}

func (e *ConfigError) Error() string {
	return errs.Msg(prefix, "configuration "+e.Field+": "+e.Reason, e.Err)
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// prefix starts the messages of the package's errors.
const prefix = "x509sa"

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
