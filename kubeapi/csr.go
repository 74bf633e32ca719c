package kubeapi

import (
	"crypto"
	"crypto/rsa"
	"math"
	"strconv"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/x509sa"
)

// MinCSRExpiration is the shortest spec.expirationSeconds of a
// CertificateSigningRequest Kubernetes accepts: 10 minutes.
const MinCSRExpiration = 10 * time.Minute

// CertificateSigningRequestOptions shape the object
// [NewCertificateSigningRequest] makes. The zero value asks
// kubernetes.io/kube-apiserver-client for a client certificate of the
// signer's default lifetime, under a generated name.
type CertificateSigningRequestOptions struct {
	// Name is the object's name, a DNS-1123 subdomain. Empty means
	// metadata.generateName "x509sa-".
	Name string
	// SignerName is spec.signerName. Empty means
	// x509sa.KubeAPIServerClientSigner, which issues client certificates
	// only: set it for ServerAuth or an X509-SVID.
	SignerName string
	// Usage is the certificate's usage. Zero means the usage the request's
	// extension request asks for; it is an error if the request asks for
	// none, or for a different one.
	Usage x509sa.Usage
	// Lifetime sets spec.expirationSeconds, whole seconds of at least
	// [MinCSRExpiration]. Zero leaves it unset (the signer's default).
	Lifetime time.Duration
}

// NewCertificateSigningRequest wraps a DER request from x509sa.CreateCSR
// in a certificates.k8s.io/v1 CertificateSigningRequest: spec.request in
// PEM, spec.signerName, spec.usages from [KeyUsages] and, with a lifetime,
// spec.expirationSeconds. The request is parsed and checked first
// (x509sa.ParseCSR), and its usage resolved for the signer
// (x509sa.ResolveUsage: a signer name x509sa.CheckSignerName accepts,
// client certificates only from kubernetes.io/kube-apiserver-client).
// Options it refuses (a lifetime under 10 minutes or not whole seconds, a
// name that is not a DNS-1123 subdomain) are a *ksa.ConfigError.
func NewCertificateSigningRequest(csrDER []byte, opts CertificateSigningRequestOptions) (*certificatesv1.CertificateSigningRequest, error) {
	csr, err := x509sa.ParseCSR(csrDER)
	if err != nil {
		return nil, err
	}
	signer := opts.SignerName
	if signer == "" {
		signer = x509sa.KubeAPIServerClientSigner
	}
	usage, err := x509sa.ResolveUsage(signer, csr, opts.Usage)
	if err != nil {
		return nil, err
	}
	obj := &certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    x509sa.EncodeCSRPEM(csr.Raw()),
			SignerName: signer,
			Usages:     KeyUsages(usage, csr.PublicKey),
		},
	}
	switch {
	case opts.Name == "":
		obj.GenerateName = "x509sa-"
	case ksa.IsObjectName(opts.Name):
		obj.Name = opts.Name
	default:
		return nil, &ksa.ConfigError{Field: "kubeapi.CertificateSigningRequestOptions.Name", Reason: "must be a DNS-1123 subdomain"}
	}
	if opts.Lifetime != 0 {
		if opts.Lifetime < MinCSRExpiration || opts.Lifetime%time.Second != 0 || opts.Lifetime/time.Second > math.MaxInt32 {
			return nil, &ksa.ConfigError{Field: "kubeapi.CertificateSigningRequestOptions.Lifetime", Reason: "must be whole seconds, at least 10 minutes"}
		}
		secs := int32(opts.Lifetime / time.Second)
		obj.Spec.ExpirationSeconds = &secs
	}
	return obj, nil
}

// CheckCertificateSigningRequest is the approver's whole check of a
// CertificateSigningRequest object: a signer name x509sa.CheckSignerName
// accepts; spec.request a strict PEM request x509sa.ParseCSRPEM accepts;
// spec.usages readable by [UsageFromKeyUsages], agreeing with the usages
// the request asks for and with its hosts and SPIFFE ID, and client-only
// for kubernetes.io/kube-apiserver-client (x509sa.ResolveUsage); then
// x509sa.MatchRequester against the requester recorded in spec (see
// [CSRRequester]). It returns the parsed request.
//
// Approving is the caller's act (an Approved condition through the
// approval subresource); this function only decides. It does not look at
// status or conditions.
func CheckCertificateSigningRequest(obj *certificatesv1.CertificateSigningRequest, opts x509sa.MatchOptions) (*x509sa.CSR, error) {
	if obj == nil {
		return nil, &ksa.ConfigError{Field: "kubeapi.obj", Reason: "is required"}
	}
	if err := x509sa.CheckSignerName(obj.Spec.SignerName); err != nil {
		return nil, err
	}
	csr, err := x509sa.ParseCSRPEM(obj.Spec.Request)
	if err != nil {
		return nil, err
	}
	specUsage, err := UsageFromKeyUsages(obj.Spec.Usages)
	if err != nil {
		return nil, err
	}
	if _, err := x509sa.ResolveUsage(obj.Spec.SignerName, csr, specUsage); err != nil {
		return nil, err
	}
	if err := x509sa.MatchRequester(csr, CSRRequester(obj), opts); err != nil {
		return nil, err
	}
	return csr, nil
}

// CSRRequester returns the requester a CertificateSigningRequest records
// (spec.username, spec.uid, spec.groups, spec.extra; kube-apiserver sets
// them from the creating user and ignores what the client sent).
func CSRRequester(obj *certificatesv1.CertificateSigningRequest) ksa.UserInfo {
	u := ksa.UserInfo{Username: obj.Spec.Username, UID: obj.Spec.UID, Groups: obj.Spec.Groups}
	if len(obj.Spec.Extra) > 0 {
		u.Extra = make(map[string][]string, len(obj.Spec.Extra))
		for k, v := range obj.Spec.Extra {
			u.Extra[k] = []string(v)
		}
	}
	return u
}

// IssueRequestFromCSR reads an x509sa.IssueRequest from a
// CertificateSigningRequest object: the DER of spec.request, the usage of
// spec.usages and the bound of spec.expirationSeconds. The object must
// have been approved by the caller's own checks (see
// [CheckCertificateSigningRequest]).
func IssueRequestFromCSR(obj *certificatesv1.CertificateSigningRequest) (x509sa.IssueRequest, error) {
	if obj == nil {
		return x509sa.IssueRequest{}, &ksa.ConfigError{Field: "kubeapi.obj", Reason: "is required"}
	}
	der, err := x509sa.DecodeCSRPEM(obj.Spec.Request)
	if err != nil {
		return x509sa.IssueRequest{}, err
	}
	usage, err := UsageFromKeyUsages(obj.Spec.Usages)
	if err != nil {
		return x509sa.IssueRequest{}, err
	}
	req := x509sa.IssueRequest{CSR: der, Usage: usage}
	if s := obj.Spec.ExpirationSeconds; s != nil {
		if *s <= 0 {
			return x509sa.IssueRequest{}, &ksa.ConfigError{Field: "kubeapi.spec.expirationSeconds", Reason: "must be positive"}
		}
		req.MaxLifetime = time.Duration(*s) * time.Second
	}
	return req, nil
}

// KeyUsages returns the spec.usages of a CertificateSigningRequest for u
// and a key: "digital signature", "key encipherment" for RSA keys only (as
// the kubelet requests them), then "client auth" and/or "server auth". The
// kubernetes.io/kube-apiserver-client signer accepts the result for
// x509sa.ClientAuth.
func KeyUsages(u x509sa.Usage, pub crypto.PublicKey) []certificatesv1.KeyUsage {
	out := make([]certificatesv1.KeyUsage, 0, 4)
	out = append(out, certificatesv1.UsageDigitalSignature)
	if _, ok := pub.(*rsa.PublicKey); ok {
		out = append(out, certificatesv1.UsageKeyEncipherment)
	}
	if u.Has(x509sa.ClientAuth) {
		out = append(out, certificatesv1.UsageClientAuth)
	}
	if u.Has(x509sa.ServerAuth) {
		out = append(out, certificatesv1.UsageServerAuth)
	}
	return out
}

// UsageFromKeyUsages reads a CertificateSigningRequest's spec.usages.
// Accepted strings are "digital signature", "key encipherment", "client
// auth" and "server auth", each at most once, with at least one of the
// last two; anything else (Kubernetes knows 23 usages) is refused, since
// identity certificates have no other use. The error matches
// x509sa.ErrInvalidUsage.
func UsageFromKeyUsages(usages []certificatesv1.KeyUsage) (x509sa.Usage, error) {
	var u x509sa.Usage
	var seen [4]bool
	for _, ku := range usages {
		var i int
		switch ku {
		case certificatesv1.UsageDigitalSignature:
			i = 0
		case certificatesv1.UsageKeyEncipherment:
			i = 1
		case certificatesv1.UsageClientAuth:
			i = 2
			u |= x509sa.ClientAuth
		case certificatesv1.UsageServerAuth:
			i = 3
			u |= x509sa.ServerAuth
		default:
			return 0, usageError(strconv.Quote(string(ku)), "not a usage of identity certificates")
		}
		if seen[i] {
			return 0, usageError(strconv.Quote(string(ku)), "duplicate usage")
		}
		seen[i] = true
	}
	if u == 0 {
		return 0, usageError("none", `neither "client auth" nor "server auth" is requested`)
	}
	return u, nil
}

// usageError reports spec.usages that cannot be read; it matches
// x509sa.ErrInvalidUsage.
func usageError(what, reason string) error {
	return errs.Wrap(prefix, x509sa.ErrInvalidUsage, "usage "+what+": "+reason, nil)
}
