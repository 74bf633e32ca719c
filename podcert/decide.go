package podcert

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/leafcert"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// Outcome is the terminal condition a decision sets.
type Outcome uint8

// The outcomes, named as the condition types of the API.
const (
	// Issued: a certificate was issued.
	Issued Outcome = iota + 1
	// Denied: the signer refuses the request (an unsupported key, refused
	// annotations).
	Denied
	// Failed: the signer cannot issue for this request (a malformed
	// request or proof, a CA that expires too soon).
	Failed
)

// String returns the condition type: "Issued", "Denied" or "Failed".
func (o Outcome) String() string {
	switch o {
	case Issued:
		return ConditionIssued
	case Denied:
		return ConditionDenied
	case Failed:
		return ConditionFailed
	}
	return "Unknown"
}

// Condition types and reasons of the API, and this package's own reasons.
const (
	ConditionIssued = "Issued"
	ConditionDenied = "Denied"
	ConditionFailed = "Failed"

	// ReasonIssued is the reason of the Issued condition.
	ReasonIssued = "Issued"
	// ReasonUnsupportedKeyType denies a key the signer does not issue to
	// (an API reason).
	ReasonUnsupportedKeyType = "UnsupportedKeyType"
	// ReasonInvalidUnverifiedUserAnnotations denies annotations that are
	// unknown, malformed or refused by the policy (an API reason).
	ReasonInvalidUnverifiedUserAnnotations = "InvalidUnverifiedUserAnnotations"
	// ReasonInvalidRequest fails a request whose spec or proof is not
	// usable.
	ReasonInvalidRequest = "InvalidRequest"
	// ReasonCAUnavailable fails a request when the CA is not valid now or
	// expires within the shortest lifetime.
	ReasonCAUnavailable = "CAUnavailable"
)

// Decision is what a [Signer] decided for a request: an outcome with its
// condition reason and message, and for Issued the chain and times. Read
// the status it sets with [Decision.Status]; kubeapi applies it to a v1 or
// v1beta1 object, checking the update first.
type Decision struct {
	Outcome Outcome
	// Reason and Message go into the condition.
	Reason, Message string
	// Err is why a request was Denied or Failed.
	Err error
	// Leaf is the issued certificate; CertificateChain is the leaf and the
	// CA's chain (see SignerConfig.Chain) as PEM.
	Leaf             *x509.Certificate
	CertificateChain string
	// NotBefore and NotAfter are the leaf's; BeginRefreshAt is halfway
	// between them, kept at least [RefreshMargin] from both.
	NotBefore, BeginRefreshAt, NotAfter time.Time
	// At is when the decision was made (the condition's
	// lastTransitionTime); Generation is the request's, the condition's
	// observedGeneration.
	At         time.Time
	Generation int64
}

// Status returns the status the decision sets: one condition, True, set
// at the decision's time (whole seconds, as the API stores it), and for
// Issued the chain and times.
func (d *Decision) Status() Status {
	st := Status{Conditions: []Condition{{
		Type:               d.Outcome.String(),
		Status:             ConditionTrue,
		ObservedGeneration: d.Generation,
		LastTransitionTime: d.At.UTC().Truncate(time.Second),
		Reason:             d.Reason,
		Message:            d.Message,
	}}}
	if d.Outcome == Issued {
		nb, bra, na := d.NotBefore, d.BeginRefreshAt, d.NotAfter
		st.CertificateChain, st.NotBefore, st.BeginRefreshAt, st.NotAfter = d.CertificateChain, &nb, &bra, &na
	}
	return st
}

// maxMessage bounds a condition message (the API allows 32 KiB).
const maxMessage = 1 << 10

func (s *Signer) refuse(req *Request, now time.Time, o Outcome, reason string, err error) Decision {
	msg := errs.Text(err)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	if reason == ReasonUnsupportedKeyType {
		msg += " (this signer issues to RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521 and ED25519 keys)"
	}
	return Decision{Outcome: o, Reason: reason, Message: msg, Err: err, At: now, Generation: req.Generation}
}

// Decide decides a request:
//
//   - a request for another signer name is not decided: the error
//     matches [ErrInvalidRequest] and nothing must be written;
//   - a spec [Request.Check] refuses, a stub CSR that does not verify or
//     is not empty, or a failed proof of possession is Failed
//     (InvalidRequest);
//   - a key [CheckKey] refuses is Denied (UnsupportedKeyType);
//   - any annotation other than the serve-hosts and extensions keys, a
//     malformed one, or one the policy refuses (every one without a
//     policy) is Denied (InvalidUnverifiedUserAnnotations);
//   - a CA that is not valid now or would cut the lifetime under an hour
//     is Failed (CAUnavailable);
//   - otherwise the certificate is Issued: the subject x509sa encodes for
//     the service account (with its UID) and the pod, plus admitted
//     extensions; the SPIFFE ID URI SAN; admitted hosts as DNS and IP SANs;
//     client and server auth; key usage digital signature (and key
//     encipherment for RSA); notBefore the clock's time minus the
//     backdate, whole seconds; a lifetime of the smallest of
//     SignerConfig.MaxLifetime, maxExpirationSeconds and the CA's
//     remaining life.
//
// Every decision's status passes [CheckStatus] before it is returned. An
// error for another signer name matches [ErrInvalidRequest]; any other
// matches [ErrSigning] (a CA signer or random source that failed, worth a
// retry, or a self-check that failed); nothing must be written then
// either.
func (s *Signer) Decide(req *Request) (Decision, error) {
	if req == nil {
		return Decision{}, requestError("request", "nil", nil)
	}
	if req.SignerName != s.cfg.SignerName {
		return Decision{}, requestError("spec.signerName", strconv.Quote(req.SignerName)+" is not this signer's name "+strconv.Quote(s.cfg.SignerName), nil)
	}
	now := s.cfg.Now()
	d, prior, err := s.decide(req, now)
	if err != nil {
		return Decision{}, err
	}
	if err := checkStatus(req, Status{}, d.Status(), now, prior); err != nil {
		return Decision{}, wrap(ErrSigning, "the decision fails the status rules", err)
	}
	return d, nil
}

// decide returns the decision and, for Issued, what it parsed of the
// certificate, for the self-check.
func (s *Signer) decide(req *Request, now time.Time) (Decision, *parsed, error) {
	if err := req.Check(); err != nil {
		return s.refuse(req, now, Failed, ReasonInvalidRequest, err), nil, nil
	}
	pub, err := req.PublicKey()
	if err != nil {
		if errors.Is(err, jwks.ErrUnsupportedKey) {
			return s.refuse(req, now, Denied, ReasonUnsupportedKeyType, err), nil, nil
		}
		return s.refuse(req, now, Failed, ReasonInvalidRequest, err), nil, nil
	}
	asked, err := parseAnnotations(req.UnverifiedUserAnnotations, s.cfg.ServeHostsKey, s.cfg.ExtensionsKey)
	if err == nil && !asked.IsZero() {
		if s.cfg.Policy == nil {
			err = annotationError("", "this signer admits none (no policy)", nil)
		} else if perr := s.cfg.Policy.Admit(req, asked); perr != nil {
			err = annotationError("", "refused by policy", perr)
		}
	}
	subject := req.Subject()
	subject.Extensions = asked.Extensions
	if err == nil && len(asked.Extensions) > 0 {
		if verr := subject.Check(); verr != nil {
			err = annotationError(s.cfg.ExtensionsKey, "invalid extension", verr)
		}
	}
	if err != nil {
		return s.refuse(req, now, Denied, ReasonInvalidUnverifiedUserAnnotations, err), nil, nil
	}

	nb, na, reason := s.validity(req, now)
	if reason != "" {
		return s.refuse(req, now, Failed, ReasonCAUnavailable, requestError("spec.maxExpirationSeconds", reason, nil)), nil, nil
	}
	name, err := subject.Name()
	if err != nil {
		return s.refuse(req, now, Failed, ReasonInvalidRequest, err), nil, nil
	}
	id, err := x509sa.NewSPIFFEID(s.cfg.TrustDomain, subject.ServiceAccount)
	if err != nil {
		return s.refuse(req, now, Failed, ReasonInvalidRequest, err), nil, nil
	}
	serial, err := s.serial()
	if err != nil {
		return Decision{}, nil, err
	}
	rawName, err := leafcert.Name(name.ToRDNSequence())
	if err != nil {
		return s.refuse(req, now, Failed, ReasonInvalidRequest, requestError("spec", "the subject does not encode", err)), nil, nil
	}
	ku := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		ku |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &leafcert.Template{
		Serial:      serial,
		Subject:     rawName,
		NotBefore:   nb,
		NotAfter:    na,
		PublicKey:   pub,
		KeyUsage:    ku,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:    asked.DNSNames,
		URIs:        []*url.URL{id.URL()},
	}
	for _, ip := range asked.IPAddresses {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(ip.AsSlice()))
	}
	der, err := s.issuer.Issue(s.cfg.Rand, tmpl)
	if err != nil {
		return Decision{}, nil, wrap(ErrSigning, "signing the certificate", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return Decision{}, nil, wrap(ErrSigning, "the issued certificate does not parse", err)
	}
	got, err := x509sa.DecodeCertificate(leaf)
	if err != nil {
		return Decision{}, nil, wrap(ErrSigning, "the issued certificate does not decode", err)
	}
	if !got.Subject.Equal(subject) || got.SPIFFEID != id {
		return Decision{}, nil, wrap(ErrSigning, "the issued certificate does not carry the requested identity", nil)
	}
	chain, leafLen := chainPEM(der, s.chainPEM)
	return Decision{
		Outcome:          Issued,
		Reason:           ReasonIssued,
		Message:          "issued to " + subject.ServiceAccount.Username() + " in pod " + req.PodName,
		Leaf:             leaf,
		CertificateChain: chain,
		NotBefore:        nb,
		NotAfter:         na,
		BeginRefreshAt:   refreshAt(nb, na),
		At:               now,
		Generation:       req.Generation,
	}, &parsed{pem: chain[:leafLen], leaf: leaf, stub: req.StubPKCS10Request, pkix: req.PKIXPublicKey, key: pub, rest: s.chainPEM}, nil
}

// chainPEM returns the leaf as a CERTIFICATE PEM block, as
// pem.EncodeToMemory writes it, followed by rest, in one allocation, and
// the length of the leaf's block.
func chainPEM(der, rest []byte) (string, int) {
	const begin, end = "-----BEGIN CERTIFICATE-----\n", "-----END CERTIFICATE-----\n"
	n := base64.StdEncoding.EncodedLen(len(der))
	leafLen := len(begin) + n + (n+63)/64 + len(end)
	var b strings.Builder
	b.Grow(leafLen + len(rest))
	b.WriteString(begin)
	var line [64]byte
	for len(der) > 0 {
		chunk := min(len(der), 48) // 48 bytes make one 64-character line
		base64.StdEncoding.Encode(line[:], der[:chunk])
		b.Write(line[:base64.StdEncoding.EncodedLen(chunk)])
		b.WriteByte('\n')
		der = der[chunk:]
	}
	b.WriteString(end)
	b.Write(rest)
	return b.String(), leafLen
}

// validity chooses notBefore and notAfter, or says why none fits.
func (s *Signer) validity(req *Request, now time.Time) (nb, na time.Time, reason string) {
	ca := s.caCert
	if now.Before(ca.NotBefore) || !now.Before(ca.NotAfter) {
		return nb, na, "the issuing CA is not valid at " + now.UTC().Format(time.RFC3339)
	}
	lifetime := min(s.cfg.MaxLifetime, time.Duration(req.MaxLifetime())*time.Second)
	nb = now.Add(-s.cfg.Backdate).UTC().Truncate(time.Second)
	na = nb.Add(lifetime)
	if caEnd := ca.NotAfter.UTC().Truncate(time.Second); na.After(caEnd) {
		na = caEnd
	}
	if na.Sub(nb) < MinLifetime {
		return nb, na, "the issuing CA expires within the shortest lifetime (1h)"
	}
	return nb, na, ""
}

// refreshAt returns the middle of the validity, kept RefreshMargin from
// both ends, whole seconds.
func refreshAt(nb, na time.Time) time.Time {
	at := nb.Add(na.Sub(nb) / 2).Truncate(time.Second)
	lo, hi := nb.Add(RefreshMargin), na.Add(-RefreshMargin)
	if at.Before(lo) {
		at = lo
	}
	if at.After(hi) {
		at = hi
	}
	return at
}
