package x509sa

import (
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
)

// Signer names with a fixed meaning in Kubernetes.
const (
	// KubeAPIServerClientSigner issues client certificates kube-apiserver
	// accepts; it never auto-approves and has no subject rules, so an
	// approver (see [MatchRequester]) must bind the subject to the
	// requester.
	KubeAPIServerClientSigner = "kubernetes.io/kube-apiserver-client"
	// legacyUnknownSigner is refused by the certificates.k8s.io/v1 API.
	legacyUnknownSigner = "kubernetes.io/legacy-unknown"
	// kubeletClientSigner and kubeletServingSigner sign only system:node
	// subjects.
	kubeletClientSigner  = "kubernetes.io/kube-apiserver-client-kubelet"
	kubeletServingSigner = "kubernetes.io/kubelet-serving"
)

// CheckSignerName reports whether name is a signer name Kubernetes accepts
// (the rules of its ValidateSignerName: a domain of at least two DNS-1123
// labels, at most 253 bytes, a single '/', a path of dot-separated DNS-1123
// subdomain parts, at most 571 bytes in all) and that can sign a
// service-account subject: kubernetes.io/legacy-unknown (refused by the v1
// API), kubernetes.io/kube-apiserver-client-kubelet and
// kubernetes.io/kubelet-serving (which require system:node subjects) are
// refused. The error matches [ErrInvalidSignerName] and says which rule
// the name breaks.
func CheckSignerName(name string) error {
	fail := func(reason string) error {
		return wrap(ErrInvalidSignerName, "signer name "+strconv.Quote(name)+": "+reason, nil)
	}
	if name == "" {
		return fail("required")
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return fail("must be a fully qualified domain and path of the form 'example.com/signer-name'")
	}
	if len(domain) > 253 {
		return fail("domain is longer than 253 bytes")
	}
	labels := 0
	for label := range strings.SplitSeq(domain, ".") {
		if !ksa.IsNamespace(label) { // a DNS-1123 label of at most 63 bytes
			return fail("domain label " + strconv.Quote(label) + " is not a DNS-1123 label")
		}
		labels++
	}
	if labels < 2 {
		return fail("should be a domain with at least two segments separated by dots")
	}
	for part := range strings.SplitSeq(path, ".") {
		if !ksa.IsObjectName(part) {
			return fail("path part " + strconv.Quote(part) + " is not a DNS-1123 subdomain")
		}
	}
	if len(name) > 253+1+253+63+1 {
		return fail("longer than 571 bytes")
	}
	switch name {
	case legacyUnknownSigner:
		return fail("the legacy signerName is not allowed via the certificates.k8s.io/v1 API")
	case kubeletClientSigner, kubeletServingSigner:
		return fail("signs only system:node subjects")
	}
	return nil
}

// ResolveUsage returns the usage a request is issued with by the signer
// named signerName, as a CertificateSigningRequest's creator and its
// approver both decide it: the signer name must pass [CheckSignerName];
// the usage given outside the request (spec.usages, a caller's choice;
// zero for none) and the one the request asks for must agree (either may
// be zero, not both); hosts need [ServerAuth] and a SPIFFE ID both usages;
// and kubernetes.io/kube-apiserver-client issues [ClientAuth] only.
// Errors match [ErrInvalidSignerName] or [ErrInvalidUsage].
func ResolveUsage(signerName string, csr *CSR, given Usage) (Usage, error) {
	if csr == nil || csr.req == nil {
		return 0, &ksa.ConfigError{Field: "x509sa.csr", Reason: "is required (from ParseCSR)"}
	}
	if err := CheckSignerName(signerName); err != nil {
		return 0, err
	}
	usage, err := resolveUsage(given, csr)
	if err != nil {
		return 0, err
	}
	if signerName == KubeAPIServerClientSigner && usage != ClientAuth {
		return 0, usageError(usage.String(), "the "+KubeAPIServerClientSigner+" signer issues client certificates only")
	}
	return usage, nil
}
