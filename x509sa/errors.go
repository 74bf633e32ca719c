package x509sa

import (
	"fmt"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "x509sa"

// Sentinel errors. Every rejection matches one of them with [errors.Is]
// and names what was wrong in its message; the two typed errors below
// carry the data a caller acts on. Keys of an unsupported type or size
// match jwks.ErrUnsupportedKey (the key limits are jwks.CheckPublicKey's);
// configurations a constructor refuses are a *ksa.ConfigError.
var (
	// ErrInvalidSubject: a subject does not carry a valid service-account
	// identity, or an identity (its extensions included) cannot be
	// encoded.
	ErrInvalidSubject = errs.New(prefix, "invalid identity subject")
	// ErrNotServiceAccount: the subject has no common name, or one that is
	// not a service-account username at all. Kubernetes would authenticate
	// such a certificate as some other user (or, without a common name, not
	// at all); a union of authenticators may move on. It always comes with
	// [ErrInvalidSubject].
	ErrNotServiceAccount = errs.New(prefix, "subject is not a service account")
	// ErrReservedExtension: an extension, or an organizational unit read
	// from a subject, uses the reserved "system:" prefix without being one
	// of the entries this package writes: an attempt to forge them. It
	// always comes with [ErrInvalidSubject].
	ErrReservedExtension = errs.New(prefix, "reserved subject extension")
	// ErrLimit: an input is over one of the documented size limits
	// ([MaxSubjectAttributes], [MaxExtensions], [MaxSANs], ...).
	ErrLimit = errs.New(prefix, "size limit exceeded")
	// ErrInvalidHost: a serve host or SAN is neither an IP address nor a
	// DNS name this package accepts.
	ErrInvalidHost = errs.New(prefix, "invalid host")
	// ErrMalformedCSR: a certificate request is not one strict PEM block,
	// not parseable DER, requests extensions this package refuses, or its
	// self-signature does not verify.
	ErrMalformedCSR = errs.New(prefix, "malformed certificate request")
	// ErrSigning: the CA's signer failed to sign (a KMS or HSM call that
	// failed), or the random source did; worth a retry.
	ErrSigning = errs.New(prefix, "signing failed")
	// ErrInvalidUsage: usages are unknown, missing, inconsistent or not
	// allowed.
	ErrInvalidUsage = errs.New(prefix, "invalid usage")
	// ErrInvalidSignerName: a signer name Kubernetes would refuse, or one
	// that cannot sign a service-account identity.
	ErrInvalidSignerName = errs.New(prefix, "invalid signer name")
	// ErrRequesterMismatch: a certificate request asks for an identity its
	// requester does not have. See [MismatchError].
	ErrRequesterMismatch = errs.New(prefix, "request does not match its requester")
	// ErrNotAllowed: an approver's policy refused part of a request (an
	// extension, a host, a SPIFFE ID).
	ErrNotAllowed = errs.New(prefix, "not allowed by policy")
	// ErrInvalidSPIFFEID: a SPIFFE ID or trust domain breaks the SPIFFE ID
	// rules, or names another service account.
	ErrInvalidSPIFFEID = errs.New(prefix, "invalid SPIFFE ID")
	// ErrLifetime: no certificate lifetime satisfies the bounds, or the
	// issuing CA is not valid now. See [LifetimeError].
	ErrLifetime = errs.New(prefix, "certificate lifetime out of bounds")
	// ErrInvalidCertificate: a certificate is not shaped like an identity
	// leaf (CA flag, key usages, SANs).
	ErrInvalidCertificate = errs.New(prefix, "invalid identity certificate")
	// ErrUntrusted: the chain does not verify against the roots for the
	// usage; the error wraps crypto/x509's (errors.As finds
	// x509.UnknownAuthorityError, x509.CertificateInvalidError, ...).
	ErrUntrusted = errs.New(prefix, "certificate not trusted")
)

// wrap returns an error of the package matching kind, reading
// "x509sa: <msg>: <cause>".
func wrap(kind error, msg string, cause error) error { return errs.Wrap(prefix, kind, msg, cause) }

// limit reports an input over a documented limit, matching [ErrLimit].
func limit(what string, size, max int) error {
	return wrap(ErrLimit, fmt.Sprintf("%d %s is over the limit of %d", size, what, max), nil)
}

// MismatchError reports a field where the identity a request asks for and
// the requester's own identity differ: what an approver denies with. It
// matches [ErrRequesterMismatch].
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

// LifetimeError reports a certificate lifetime outside the issuer's
// bounds: a requester may ask again with a longer bound, an operator
// renews a CA that expires too soon. It matches [ErrLifetime].
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
