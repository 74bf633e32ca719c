package x509sa

import (
	"maps"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

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
// Errors are a *[MismatchError] or a *[PolicyError].
func MatchRequester(csr *CSR, requester ksa.UserInfo, opts MatchOptions) error {
	if csr == nil || csr.req == nil {
		return &ConfigError{Field: "csr", Reason: "required (from ParseCSR)"}
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
			return &PolicyError{What: "extension", Value: k + "=" + v}
		}
	}
	for _, h := range csr.Hosts() {
		if opts.AllowHost == nil || !opts.AllowHost(h) {
			return &PolicyError{What: "host", Value: h}
		}
	}
	if id := csr.SPIFFEID; !id.IsZero() && (opts.TrustDomain == "" || id.TrustDomain != opts.TrustDomain) {
		return &PolicyError{What: "SPIFFE ID", Value: id.String()}
	}
	return nil
}

func joinComma(s []string) string { return strings.Join(s, ",") }

// CheckCertificateSigningRequest is the approver's whole check of a
// CertificateSigningRequest object: a signer name [ValidateSignerName]
// accepts; spec.request a strict PEM request [ParseCSR] accepts;
// spec.usages readable by [UsageFromKubernetes], agreeing with the usages
// the request asks for and with its hosts and SPIFFE ID, and client-only for
// kubernetes.io/kube-apiserver-client; then [MatchRequester] against the
// requester recorded in spec (see [RequesterOf]). It returns the parsed
// request.
//
// Approving is the caller's act (an Approved condition through the
// approval subresource); this function only decides. It does not look at
// status or conditions.
func CheckCertificateSigningRequest(obj *certificatesv1.CertificateSigningRequest, opts MatchOptions) (*CSR, error) {
	if obj == nil {
		return nil, &ConfigError{Field: "obj", Reason: "required"}
	}
	if err := ValidateSignerName(obj.Spec.SignerName); err != nil {
		return nil, err
	}
	csr, err := ParseCSRPEM(obj.Spec.Request)
	if err != nil {
		return nil, err
	}
	specUsage, err := UsageFromKubernetes(obj.Spec.Usages)
	if err != nil {
		return nil, err
	}
	usage, err := resolveUsage(specUsage, csr)
	if err != nil {
		return nil, err
	}
	if obj.Spec.SignerName == KubeAPIServerClientSigner && usage != ClientAuth {
		return nil, &UsageError{Usage: usage, Reason: "the " + KubeAPIServerClientSigner + " signer issues client certificates only"}
	}
	if err := MatchRequester(csr, RequesterOf(obj), opts); err != nil {
		return nil, err
	}
	return csr, nil
}
