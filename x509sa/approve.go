package x509sa

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
)

// MatchOptions is an approver's policy for what a request may carry beyond
// the requester's own identity. The zero value is the strictest: no
// extensions, no serve hosts, no SPIFFE ID.
type MatchOptions struct {
	// TrustDomain is the only trust domain a requested SPIFFE ID may name.
	// Empty refuses every SPIFFE ID.
	TrustDomain string
	// AllowExtension decides each requested extension. Nil refuses all:
	// extensions are the requester's claims, which nothing in Kubernetes
	// vouches for.
	AllowExtension func(key, value string) bool
	// AllowHost decides each requested DNS name or IP address (as a
	// string). Nil refuses all.
	AllowHost func(host string) bool
}

// MatchRequester reports whether a request asks only for its requester's own
// identity, as an approver for kubernetes.io/kube-apiserver-client (which
// has no subject rules of its own) must check:
//
//   - the requester's username is the subject's service-account username;
//   - the requester has both service-account groups of that namespace (so
//     it authenticated as the service account);
//   - a UID in the subject equals the requester's UID (a service account's
//     token carries it; an empty requester UID does not match);
//   - a pod in the subject is the requester's pod (the
//     authentication.kubernetes.io/pod-name extra of a pod-bound token,
//     exactly one value);
//   - extensions, hosts and the SPIFFE trust domain pass opts.
//
// A requester that differs is a *[MismatchError]; a part of the request
// opts refuses matches [ErrNotAllowed].
func MatchRequester(csr *CSR, requester ksa.UserInfo, opts MatchOptions) error {
	if csr == nil || csr.req == nil {
		return &ksa.ConfigError{Field: "x509sa.csr", Reason: "is required (from ParseCSR)"}
	}
	sa := csr.Subject.ServiceAccount
	if !ksa.MatchesUsername(sa.Namespace, sa.Name, requester.Username) {
		return &MismatchError{Field: "username", Want: sa.Username(), Got: requester.Username}
	}
	for _, g := range sa.Groups() {
		if !slices.Contains(requester.Groups, g) {
			return &MismatchError{Field: "groups", Want: g, Got: joinComma(requester.Groups)}
		}
	}
	if sa.UID != "" && requester.UID != sa.UID {
		return &MismatchError{Field: "uid", Want: sa.UID, Got: requester.UID}
	}
	if pod := csr.Subject.PodName; pod != "" {
		got := requester.Extra[ksa.ExtraPodName]
		if len(got) != 1 || got[0] != pod {
			return &MismatchError{Field: "pod-name", Want: pod, Got: joinComma(got)}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(csr.Subject.Extensions)) {
		v := csr.Subject.Extensions[k]
		if opts.AllowExtension == nil || !opts.AllowExtension(k, v) {
			return notAllowed("extension", k+"="+v)
		}
	}
	for _, h := range csr.Hosts() {
		if opts.AllowHost == nil || !opts.AllowHost(h) {
			return notAllowed("host", h)
		}
	}
	if id := csr.SPIFFEID; !id.IsZero() && (opts.TrustDomain == "" || id.TrustDomain != opts.TrustDomain) {
		return notAllowed("SPIFFE ID", id.String())
	}
	return nil
}

func joinComma(s []string) string { return strings.Join(s, ",") }

// notAllowed reports a part of a request an approver's policy refused
// (what is "extension", "host" or "SPIFFE ID"). It matches
// [ErrNotAllowed].
func notAllowed(what, value string) error {
	return wrap(ErrNotAllowed, what+" "+strconv.Quote(value)+" is not allowed", nil)
}
