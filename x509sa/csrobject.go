package x509sa

import (
	"math"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
)

// Signer names with a fixed meaning in Kubernetes.
const (
	// KubeAPIServerClientSigner issues client certificates kube-apiserver
	// accepts; it never auto-approves and has no subject rules, so an
	// approver (see [CheckCertificateSigningRequest]) must bind the subject
	// to the requester.
	KubeAPIServerClientSigner = certificatesv1.KubeAPIServerClientSignerName
	// legacyUnknownSigner is refused by the certificates.k8s.io/v1 API.
	legacyUnknownSigner = "kubernetes.io/legacy-unknown"
)

// MinExpiration is the shortest spec.expirationSeconds Kubernetes accepts.
const MinExpiration = 10 * time.Minute

// ValidateSignerName reports whether name is a signer name Kubernetes
// accepts (the rules of its ValidateSignerName: a domain of at least two
// DNS-1123 labels, at most 253 bytes, a single '/', a path of dot-separated
// DNS-1123 subdomain parts, at most 571 bytes in all) and that can sign a
// service-account subject: kubernetes.io/legacy-unknown (refused by the v1
// API), kubernetes.io/kube-apiserver-client-kubelet and
// kubernetes.io/kubelet-serving (which require system:node subjects) are
// refused. The error is a *[SignerNameError].
func ValidateSignerName(name string) error {
	fail := func(reason string) error { return &SignerNameError{SignerName: name, Reason: reason} }
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
	case certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName:
		return fail("signs only system:node subjects")
	}
	return nil
}

// RequestOptions shape a CertificateSigningRequest object. The zero value
// asks kubernetes.io/kube-apiserver-client for a client certificate of the
// signer's default lifetime, under a generated name.
type RequestOptions struct {
	// Name is the object's name, a DNS-1123 subdomain. Empty means
	// metadata.generateName "x509sa-".
	Name string
	// SignerName is spec.signerName. Empty means
	// [KubeAPIServerClientSigner], which issues client certificates only:
	// set it for ServerAuth or an X509-SVID.
	SignerName string
	// Usage is the certificate's usage. Zero means the usage the request's
	// extension request asks for; it is an error if the request asks for
	// none, or for a different one.
	Usage Usage
	// Lifetime sets spec.expirationSeconds, whole seconds of at least
	// [MinExpiration]. Zero leaves it unset (the signer's default).
	Lifetime time.Duration
}

// NewCertificateSigningRequest wraps a DER request from [CreateCSR] in a
// certificates.k8s.io/v1 CertificateSigningRequest: spec.request in PEM,
// spec.signerName, spec.usages from [Usage.KubernetesUsages] and, with a
// lifetime, spec.expirationSeconds. The request is parsed and checked first
// ([ParseCSR]). Refused: a signer name [ValidateSignerName] refuses,
// ServerAuth with kubernetes.io/kube-apiserver-client (that signer fails such
// requests), a lifetime under 10 minutes or not whole seconds.
func NewCertificateSigningRequest(csrDER []byte, opts RequestOptions) (*certificatesv1.CertificateSigningRequest, error) {
	csr, err := ParseCSR(csrDER)
	if err != nil {
		return nil, err
	}
	usage, err := resolveUsage(opts.Usage, csr)
	if err != nil {
		return nil, err
	}
	signer := opts.SignerName
	if signer == "" {
		signer = KubeAPIServerClientSigner
	}
	if err := ValidateSignerName(signer); err != nil {
		return nil, err
	}
	if signer == KubeAPIServerClientSigner && usage != ClientAuth {
		return nil, &UsageError{Usage: usage, Reason: "the " + KubeAPIServerClientSigner + " signer issues client certificates only"}
	}
	obj := &certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    EncodeCSRPEM(csr.Raw()),
			SignerName: signer,
			Usages:     usage.KubernetesUsages(csr.PublicKey),
		},
	}
	switch {
	case opts.Name == "":
		obj.GenerateName = "x509sa-"
	case ksa.IsObjectName(opts.Name):
		obj.Name = opts.Name
	default:
		return nil, &ConfigError{Field: "Name", Reason: "must be a DNS-1123 subdomain"}
	}
	if opts.Lifetime != 0 {
		if opts.Lifetime < MinExpiration || opts.Lifetime%time.Second != 0 || opts.Lifetime/time.Second > math.MaxInt32 {
			return nil, &ConfigError{Field: "Lifetime", Reason: "must be whole seconds, at least 10 minutes"}
		}
		secs := int32(opts.Lifetime / time.Second)
		obj.Spec.ExpirationSeconds = &secs
	}
	return obj, nil
}

// resolveUsage combines a usage given by the caller (or spec.usages) with
// the one the request asks for: either may be zero, both must agree, and the
// result must fit the request's hosts and SPIFFE ID.
func resolveUsage(given Usage, csr *CSR) (Usage, error) {
	if given != 0 && !given.valid() {
		return 0, &UsageError{Usage: given, Reason: "unknown usage bits"}
	}
	usage := given
	switch {
	case given == 0:
		usage = csr.Usage
	case csr.Usage != 0 && csr.Usage != given:
		return 0, &UsageError{Usage: given, Reason: "differs from the request's extended key usage " + csr.Usage.String()}
	}
	if usage == 0 {
		return 0, &UsageError{Reason: "no usage given and the request asks for none"}
	}
	if uerr := checkUsageShape(usage, len(csr.DNSNames)+len(csr.IPAddresses), !csr.SPIFFEID.IsZero()); uerr != nil {
		return 0, uerr
	}
	return usage, nil
}

// RequesterOf returns the requester a CertificateSigningRequest records
// (spec.username, spec.uid, spec.groups, spec.extra; kube-apiserver sets
// them from the creating user and ignores what the client sent).
func RequesterOf(obj *certificatesv1.CertificateSigningRequest) ksa.UserInfo {
	u := ksa.UserInfo{Username: obj.Spec.Username, UID: obj.Spec.UID, Groups: obj.Spec.Groups}
	if len(obj.Spec.Extra) > 0 {
		u.Extra = make(map[string][]string, len(obj.Spec.Extra))
		for k, v := range obj.Spec.Extra {
			u.Extra[k] = []string(v)
		}
	}
	return u
}
