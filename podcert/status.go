package podcert

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// Status is a PodCertificateRequest's status, in one shape for
// certificates.k8s.io/v1 and v1beta1 (whose statuses have the same
// fields), in the standard library's types; kubeapi converts it to and
// from either version's. A nil time is unset, as in the API.
type Status struct {
	Conditions                          []Condition
	CertificateChain                    string
	NotBefore, BeginRefreshAt, NotAfter *time.Time
}

// Condition is a condition of a PodCertificateRequest's status, the
// fields of the API's condition (metav1.Condition) in the standard
// library's types.
type Condition struct {
	// Type is the condition type: [ConditionIssued], [ConditionDenied] or
	// [ConditionFailed] for the terminal conditions a signer sets.
	Type string
	// Status is "True", "False" or "Unknown" ([ConditionTrue]).
	Status string
	// ObservedGeneration is the request's metadata.generation when the
	// condition was set.
	ObservedGeneration int64
	// LastTransitionTime is when the condition was set; the zero time is
	// unset.
	LastTransitionTime time.Time
	// Reason is a CamelCase reason ([ReasonIssued], ...); Message says it
	// in words.
	Reason, Message string
}

// ConditionTrue is the status of a condition that holds.
const ConditionTrue = "True"

// Condition limits of the API.
const (
	maxReasonLen  = 1 << 10
	maxMessageLen = 32 << 10
	// clockTolerance is how far notBefore may be from kube-apiserver's
	// clock.
	clockTolerance = 5 * time.Minute
)

var reasonRE = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// CheckStatus reports whether kube-apiserver would accept a status update
// from old to updated for the request, its clock reading now: for either
// API version, read with kubeapi's conversions. It mirrors the API's
// status validation rule for rule (a test in the interop module holds it
// to Kubernetes' own code):
//
//   - conditions: only Issued, Denied or Failed, at most one, status True;
//     each with a reason of the condition form (at most 1 KiB), a
//     lastTransitionTime, a non-negative observedGeneration, a message of
//     at most 32 KiB; no type twice;
//   - a status that was Issued, Denied or Failed never changes;
//   - Denied and Failed set nothing but the condition;
//   - Issued: a chain of at most [MaxCertificateChainSize] bytes of
//     CERTIFICATE PEM blocks that parse, the leaf first, issued to the
//     request's key; leaf DNS names neither empty nor with empty labels,
//     e-mail addresses that parse; notBefore and notAfter equal to the
//     leaf's, notBefore strictly within 5 minutes of now; a lifetime of at
//     least one hour and at most maxExpirationSeconds; beginRefreshAt in
//     [notBefore+10m, notAfter-10m];
//   - otherwise the status does not change.
//
// The error lists every problem found, each a *[StatusError] (matching
// [ErrInvalidStatus]); like the API server, checking stops at the first
// problem of a stage.
func CheckStatus(req *Request, old, updated Status, now time.Time) error {
	return checkStatus(req, old, updated, now, nil)
}

// parsed is what Decide already parsed of the status it decided: its
// self-check, before any caller sees the decision, reuses it wherever the
// status and request hold the same bytes.
type parsed struct {
	// pem and leaf are the issued leaf's PEM block, and the leaf parsed.
	pem  string
	leaf *x509.Certificate
	// stub and pkix are the request's key fields, and key the key read
	// from them.
	stub, pkix []byte
	key        crypto.PublicKey
	// rest is the chain after the leaf, parsed when the Signer was built.
	rest []byte
}

func checkStatus(req *Request, old, updated Status, now time.Time, prior *parsed) error {
	var list []error
	add := func(field, reason string) { list = append(list, &StatusError{Field: field, Reason: reason}) }
	done := func() error { return errs.Join(prefix, "status update refused", list) }

	known := 0
	seen := make(map[string]bool, len(updated.Conditions))
	for i, c := range updated.Conditions {
		path := func() string { return fmt.Sprintf("status.conditions[%d]", i) } // only for errors
		switch c.Type {
		case ConditionIssued, ConditionDenied, ConditionFailed:
			known++
			if known > 1 {
				add(path()+".type", "at most one condition of type Issued, Denied or Failed")
			}
			if c.Status != ConditionTrue {
				add(path()+".status", fmt.Sprintf("%q is not supported (only True)", c.Status))
			}
		default:
			add(path()+".type", fmt.Sprintf("%q is not supported (only Issued, Denied or Failed)", c.Type))
		}
		if seen[c.Type] {
			add(path(), fmt.Sprintf("duplicate type %q", c.Type))
		}
		seen[c.Type] = true
		if c.ObservedGeneration < 0 {
			add(path()+".observedGeneration", "must not be negative")
		}
		if c.LastTransitionTime.IsZero() {
			add(path()+".lastTransitionTime", "required")
		}
		switch {
		case c.Reason == "":
			add(path()+".reason", "required")
		case len(c.Reason) > maxReasonLen:
			add(path()+".reason", "longer than 1024 bytes")
		case !reasonRE.MatchString(c.Reason):
			add(path()+".reason", "must start with a letter, hold only letters, digits and _,: and end with a letter, digit or _")
		}
		if len(c.Message) > maxMessageLen {
			add(path()+".message", "longer than 32768 bytes")
		}
	}
	if len(list) > 0 {
		return done()
	}

	if terminal(old) != 0 {
		if !statusEqual(old, updated) {
			add("status", "immutable once Issued, Denied or Failed")
		}
		return done()
	}
	switch terminal(updated) {
	case Denied, Failed:
		if !statusEqual(updated, Status{Conditions: updated.Conditions}) {
			add("status", "only the condition may be set when denying or failing")
		}
		return done()
	case Issued:
		checkIssued(req, updated, now, add, prior)
		return done()
	}
	if !statusEqual(old, updated) {
		add("status", "immutable unless becoming Issued, Denied or Failed")
	}
	return done()
}

// Outcome returns the outcome the status records (its True Issued, Denied
// or Failed condition), or zero for a request not yet decided: a
// controller decides only those, as the API server refuses any change to a
// decided request.
func (st Status) Outcome() Outcome { return terminal(st) }

// terminal returns the outcome a status records (a True Issued, Denied or
// Failed condition), or zero.
func terminal(st Status) Outcome {
	for _, c := range st.Conditions {
		if c.Status != ConditionTrue {
			continue
		}
		switch c.Type {
		case ConditionIssued:
			return Issued
		case ConditionDenied:
			return Denied
		case ConditionFailed:
			return Failed
		}
	}
	return 0
}

func checkIssued(req *Request, st Status, now time.Time, add func(field, reason string), prior *parsed) {
	const chainField = "status.certificateChain"
	if len(st.CertificateChain) > MaxCertificateChainSize {
		add(chainField, fmt.Sprintf("%d bytes is over the limit of %d", len(st.CertificateChain), MaxCertificateChainSize))
		return
	}
	var leaf *x509.Certificate
	var rest []byte
	if prior != nil && strings.HasPrefix(st.CertificateChain, prior.pem) {
		// The leaf block the Signer wrote, as pem.Decode would read it.
		leaf, rest = prior.leaf, []byte(st.CertificateChain[len(prior.pem):])
	} else {
		block, after := pem.Decode([]byte(st.CertificateChain))
		switch {
		case block == nil:
			add(chainField, "must hold at least one certificate")
			return
		case block.Type != "CERTIFICATE":
			add(chainField, "must hold only CERTIFICATE PEM blocks")
			return
		}
		var err error
		if leaf, err = x509.ParseCertificate(block.Bytes); err != nil {
			add(chainField, "the leaf does not parse")
			return
		}
		rest = after
	}
	for _, name := range leaf.DNSNames {
		if name == "" {
			add(chainField, "the leaf has an empty DNS name")
		}
		if strings.Contains(name, "..") {
			add(chainField, fmt.Sprintf("the leaf's DNS name %q has an empty label", name))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			add(chainField, fmt.Sprintf("the leaf's DNS name %q starts or ends with a dot", name))
		}
	}
	for _, addr := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(addr); err != nil {
			add(chainField, fmt.Sprintf("the leaf's e-mail address %q does not parse", addr))
		}
	}
	var want crypto.PublicKey
	if prior != nil && bytes.Equal(req.StubPKCS10Request, prior.stub) && bytes.Equal(req.PKIXPublicKey, prior.pkix) {
		want = prior.key
	} else {
		var reason string
		if want, reason = requestedKey(req); reason != "" {
			add("spec", reason)
			return
		}
	}
	if k, ok := want.(interface{ Equal(crypto.PublicKey) bool }); ok && !k.Equal(leaf.PublicKey) {
		add(chainField, "the leaf was not issued to the requested key")
		return
	}
	if st.NotBefore == nil {
		add("status.notBefore", "required")
	}
	if st.NotAfter == nil {
		add("status.notAfter", "required")
	}
	if st.BeginRefreshAt == nil {
		add("status.beginRefreshAt", "required")
	}
	if st.NotBefore == nil || st.NotAfter == nil || st.BeginRefreshAt == nil {
		return
	}
	nb, na, bra := *st.NotBefore, *st.NotAfter, *st.BeginRefreshAt
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !nb.Equal(leaf.NotBefore):
		add("status.notBefore", "must equal the leaf's notBefore")
	case !(nb.After(now.Add(-clockTolerance)) && nb.Before(now.Add(clockTolerance))):
		add("status.notBefore", "must be within 5 minutes of the API server's clock")
	case !na.Equal(leaf.NotAfter):
		add("status.notAfter", "must equal the leaf's notAfter")
	case lifetime < MinLifetime:
		add(chainField, fmt.Sprintf("leaf lifetime %v is under one hour", lifetime))
	case lifetime > time.Duration(req.MaxLifetime())*time.Second:
		add(chainField, fmt.Sprintf("leaf lifetime %v is over spec.maxExpirationSeconds (%d)", lifetime, req.MaxLifetime()))
	case bra.Before(nb.Add(RefreshMargin)):
		add("status.beginRefreshAt", "must be at least 10 minutes after notBefore")
	case bra.After(na.Add(-RefreshMargin)):
		add("status.beginRefreshAt", "must be at least 10 minutes before notAfter")
	default:
		if prior != nil && bytes.Equal(rest, prior.rest) {
			return
		}
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				return
			}
			if block.Type != "CERTIFICATE" {
				add(chainField, "must hold only CERTIFICATE PEM blocks")
				return
			}
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				add(chainField, "an intermediate does not parse")
				return
			}
		}
	}
}

// requestedKey reads the request's public key as the API server does when
// checking a status: from the stub CSR if set, else the PKIX key, without
// verifying the proof again.
func requestedKey(req *Request) (crypto.PublicKey, string) {
	if len(req.StubPKCS10Request) > 0 {
		csr, err := x509.ParseCertificateRequest(req.StubPKCS10Request)
		if err != nil {
			return nil, "stubPKCS10Request is not a PKCS#10 request"
		}
		return csr.PublicKey, ""
	}
	pub, err := x509.ParsePKIXPublicKey(req.PKIXPublicKey)
	if err != nil {
		return nil, "pkixPublicKey is not a PKIX public key"
	}
	return pub, ""
}

// statusEqual compares statuses as the API server does: times by instant,
// nil and empty condition lists alike.
func statusEqual(a, b Status) bool {
	if a.CertificateChain != b.CertificateChain || !timeEqual(a.NotBefore, b.NotBefore) ||
		!timeEqual(a.BeginRefreshAt, b.BeginRefreshAt) || !timeEqual(a.NotAfter, b.NotAfter) ||
		len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.ObservedGeneration != y.ObservedGeneration ||
			!x.LastTransitionTime.Equal(y.LastTransitionTime) || x.Reason != y.Reason || x.Message != y.Message {
			return false
		}
	}
	return true
}

func timeEqual(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
