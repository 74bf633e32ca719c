package podcert

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// Check checks what kube-apiserver checks when a request is created,
// except the proof (see [Request.PublicKey]), rule for rule:
//
//   - metadata.namespace is a namespace name (a DNS-1123 label) and
//     metadata.name an object name (a DNS-1123 subdomain);
//   - spec.signerName is of the form example.com/signer-name: a domain of
//     at least two DNS-1123 labels, at most 253 bytes; a path of
//     dot-separated parts of at most 253 bytes each; at most
//     [MaxSignerNameLength] bytes in all;
//   - spec.podName, spec.serviceAccountName and spec.nodeName are object
//     names (required);
//   - spec.podUID, spec.serviceAccountUID and spec.nodeUID are 1 to
//     [MaxUIDLength] bytes;
//   - spec.maxExpirationSeconds is within [[MinMaxExpirationSeconds],
//     [KubernetesMaxExpirationSeconds]] for a signer named kubernetes.io/...
//     and [[MinMaxExpirationSeconds], [MaxMaxExpirationSeconds]] for any
//     other (zero is unset: the API's default, [DefaultMaxExpirationSeconds]);
//   - every key of spec.unverifiedUserAnnotations, lower-cased, is a
//     domain-prefixed key (a DNS subdomain, '/', and a name of at most 63
//     letters, digits, '-', '_' and '.', starting and ending with a letter
//     or digit), and keys and values together take at most
//     [MaxUnverifiedUserAnnotationsSize] bytes.
//
// One rule is stricter than kube-apiserver's: the service-account UID must
// be one x509sa can carry (letters, digits and -._:). A signer runs
// Check because a request may come from an API server older or laxer
// than these rules. The error matches [ErrInvalidRequest] and names the
// field of the first rule broken; a bad name also matches
// ksa.ErrInvalidName.
func (r *Request) Check() error {
	if err := ksa.CheckNamespace("namespace", r.Namespace); err != nil {
		return requestError("metadata.namespace", "", err)
	}
	if err := ksa.CheckObjectName("name", r.Name); err != nil {
		return requestError("metadata.name", "", err)
	}
	if err := checkSignerName(r.SignerName); err != nil {
		return requestError("spec.signerName", "", err)
	}
	for _, f := range [...]struct{ field, what, name string }{
		{"spec.podName", "pod name", r.PodName},
		{"spec.serviceAccountName", "service account name", r.ServiceAccountName},
		{"spec.nodeName", "node name", r.NodeName},
	} {
		if err := ksa.CheckObjectName(f.what, f.name); err != nil {
			return requestError(f.field, "", err)
		}
	}
	for _, f := range [...]struct{ field, uid string }{
		{"spec.podUID", r.PodUID}, {"spec.serviceAccountUID", r.ServiceAccountUID}, {"spec.nodeUID", r.NodeUID},
	} {
		if f.uid == "" || len(f.uid) > MaxUIDLength {
			return requestError(f.field, "must be 1 to "+strconv.Itoa(MaxUIDLength)+" bytes", nil)
		}
	}
	if err := r.Subject().Check(); err != nil {
		return requestError("spec", "service account and pod", err)
	}
	hi := int32(MaxMaxExpirationSeconds)
	if IsKubernetesSignerName(r.SignerName) {
		hi = KubernetesMaxExpirationSeconds
	}
	if m := r.MaxLifetime(); m < MinMaxExpirationSeconds || m > hi {
		return requestError("spec.maxExpirationSeconds", fmt.Sprintf("%d is not in [%d, %d]", m, MinMaxExpirationSeconds, hi), nil)
	}
	return checkUserAnnotations(r.UnverifiedUserAnnotations)
}

// checkSignerName checks the form of a signer name. x509sa holds the rules;
// the names it refuses only for CertificateSigningRequests are of a valid
// form.
func checkSignerName(name string) error {
	switch name {
	case "kubernetes.io/legacy-unknown", "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving":
		return nil
	}
	return x509sa.CheckSignerName(name)
}

// IsKubernetesSignerName reports whether a signer name is reserved for the
// Kubernetes project (kubernetes.io/... or a subdomain of kubernetes.io).
func IsKubernetesSignerName(name string) bool {
	domain, _, _ := strings.Cut(name, "/")
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// checkUserAnnotations checks the keys' form and the total size of
// spec.unverifiedUserAnnotations; what they ask for is the decision's.
func checkUserAnnotations(ann map[string]string) error {
	const field = "spec.unverifiedUserAnnotations"
	size := 0
	for k, v := range ann {
		size += len(k) + len(v)
	}
	if size > MaxUnverifiedUserAnnotationsSize {
		return requestError(field, "too large", limit("annotation bytes", size, MaxUnverifiedUserAnnotationsSize))
	}
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		if reason := checkDomainPrefixedKey(strings.ToLower(k)); reason != "" {
			return requestError(field, fmt.Sprintf("key %q %s", k, reason), nil)
		}
	}
	return nil
}

// checkDomainPrefixedKey returns why key is not prefix/name with a DNS
// subdomain prefix and a name of at most 63 bytes of [A-Za-z0-9-_.]
// starting and ending with a letter or digit, or "".
func checkDomainPrefixedKey(key string) string {
	prefix, name, ok := strings.Cut(key, "/")
	switch {
	case !ok || strings.Contains(name, "/"):
		return `must be a domain-prefixed key such as "example.com/name"`
	case !ksa.IsObjectName(prefix):
		return "has a prefix that is not a DNS subdomain"
	case name == "" || len(name) > 63:
		return "must have a name part of 1 to 63 bytes"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		edge := i == 0 || i == len(name)-1
		if !alnum && (edge || c != '-' && c != '_' && c != '.') {
			return "must have a name part of letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
		}
	}
	return ""
}
