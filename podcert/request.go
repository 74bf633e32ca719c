package podcert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/keyname"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// Limits and defaults of the PodCertificateRequest API, as kube-apiserver
// applies them.
const (
	// MaxStubPKCS10RequestSize bounds spec.stubPKCS10Request, in bytes.
	MaxStubPKCS10RequestSize = 10 << 10
	// MaxPKIXPublicKeySize bounds the older spec.pkixPublicKey.
	MaxPKIXPublicKeySize = 10 << 10
	// MaxProofOfPossessionSize bounds the older spec.proofOfPossession.
	MaxProofOfPossessionSize = 10 << 10
	// MaxCertificateChainSize bounds status.certificateChain, in bytes.
	MaxCertificateChainSize = 100 << 10
	// MaxUIDLength bounds the pod, service-account and node UIDs.
	MaxUIDLength = 128
	// MaxSignerNameLength bounds spec.signerName: a 253-byte domain, '/',
	// and a path of 317 bytes (a namespace, '.' and an object name).
	MaxSignerNameLength = 253 + 1 + 253 + 1 + 63
	// MaxUnverifiedUserAnnotationsSize bounds
	// spec.unverifiedUserAnnotations, keys and values together, in bytes
	// (a signer reads at most [MaxAnnotationsSize] of them).
	MaxUnverifiedUserAnnotationsSize = 256 << 10
	// MinMaxExpirationSeconds is the smallest spec.maxExpirationSeconds,
	// and the shortest certificate lifetime: one hour.
	MinMaxExpirationSeconds = 3600
	// DefaultMaxExpirationSeconds is what kube-apiserver sets when
	// spec.maxExpirationSeconds is omitted: 24 hours.
	DefaultMaxExpirationSeconds = 86400
	// KubernetesMaxExpirationSeconds is the largest value for signers named
	// kubernetes.io/...: 24 hours.
	KubernetesMaxExpirationSeconds = 86400
	// MaxMaxExpirationSeconds is the largest value for other signers: 91
	// days.
	MaxMaxExpirationSeconds = 91 * 86400
)

// Request is a PodCertificateRequest: the object's identity and its spec,
// in one shape for certificates.k8s.io/v1 and v1beta1, in the standard
// library's types (kubeapi reads it from either version's object; byte
// slices and the map are shared with the object, not copied).
type Request struct {
	// Namespace and Name identify the object; Namespace is the pod's and
	// the service account's namespace.
	Namespace, Name string
	// Generation is metadata.generation, copied into the observed
	// generation of the condition a decision sets.
	Generation int64

	SignerName                            string
	PodName, PodUID                       string
	ServiceAccountName, ServiceAccountUID string
	NodeName, NodeUID                     string
	// MaxExpirationSeconds is the requester's bound on the lifetime; zero
	// means unset ([DefaultMaxExpirationSeconds]).
	MaxExpirationSeconds int32
	// StubPKCS10Request is the DER PKCS#10 request whose signature proves
	// possession of the key (v1, and v1beta1 from Kubernetes 1.36).
	StubPKCS10Request []byte
	// PKIXPublicKey and ProofOfPossession are the older form (v1beta1
	// only): a DER public key and its signature over the pod UID.
	PKIXPublicKey, ProofOfPossession []byte
	// UnverifiedUserAnnotations are the pod author's free-form requests
	// (see [Annotations]).
	UnverifiedUserAnnotations map[string]string
}

// ServiceAccount returns the requesting service account (namespace, name
// and UID).
func (r *Request) ServiceAccount() ksa.ServiceAccount {
	return ksa.ServiceAccount{Namespace: r.Namespace, Name: r.ServiceAccountName, UID: r.ServiceAccountUID}
}

// Subject returns the identity subject x509sa encodes for the request: the
// service account with its UID, and the pod.
func (r *Request) Subject() x509sa.Subject {
	return x509sa.Subject{ServiceAccount: r.ServiceAccount(), PodName: r.PodName}
}

// MaxLifetime returns the requester's bound, with the API's default when
// unset.
func (r *Request) MaxLifetime() int32 {
	if r.MaxExpirationSeconds == 0 {
		return DefaultMaxExpirationSeconds
	}
	return r.MaxExpirationSeconds
}

// emptySubject is the DER of an empty name, the subject of the kubelet's
// stub request.
var emptySubject = []byte{0x30, 0x00}

// PublicKey returns the key the certificate is to be issued to, after
// checking that its holder proved possession of it:
//
//   - exactly one form: the stub PKCS#10 request, or the public key with
//     its proof of possession, within their size limits ([ErrLimit]);
//   - the stub request parses and its signature verifies; it is empty (no
//     subject, no extensions), as the kubelet makes it and as Kubernetes
//     asks signers to require: identity comes from the spec, never from
//     the request;
//   - the older proof is the key's signature over the pod UID: Ed25519
//     over the bytes, ECDSA (ASN.1) over their SHA-256, RSA-PSS with
//     SHA-256;
//   - the key is RSA of 3072 or 4096 bits, ECDSA on P-256, P-384 or P-521,
//     or Ed25519, and passes jwks.CheckPublicKey (else the error matches
//     jwks.ErrUnsupportedKey).
//
// Other errors, failed proofs included, match [ErrInvalidRequest] and name
// the spec field.
func (r *Request) PublicKey() (crypto.PublicKey, error) {
	stub, pkix, pop := len(r.StubPKCS10Request) > 0, len(r.PKIXPublicKey) > 0, len(r.ProofOfPossession) > 0
	switch {
	case stub && !pkix && !pop:
		return checkStubRequest(r.StubPKCS10Request)
	case !stub && pkix && pop:
		return checkProofOfPossession(r.PKIXPublicKey, r.ProofOfPossession, r.PodUID)
	}
	return nil, requestError("spec", "exactly one of stubPKCS10Request or (pkixPublicKey, proofOfPossession) must be set", nil)
}

func checkStubRequest(der []byte) (crypto.PublicKey, error) {
	const field = "spec.stubPKCS10Request"
	if len(der) > MaxStubPKCS10RequestSize {
		return nil, limit("stub CSR bytes", len(der), MaxStubPKCS10RequestSize)
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return nil, requestError(field, "not a PKCS#10 request", err)
	}
	if err := CheckKey(csr.PublicKey); err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, requestError(field, "signature does not verify", err)
	}
	if !bytes.Equal(csr.RawSubject, emptySubject) || len(csr.Extensions) > 0 {
		return nil, requestError(field, "must be empty (no subject, no extensions): identity comes from the spec", nil)
	}
	return csr.PublicKey, nil
}

func checkProofOfPossession(pkixDER, proof []byte, podUID string) (crypto.PublicKey, error) {
	switch {
	case len(pkixDER) > MaxPKIXPublicKeySize:
		return nil, limit("PKIX public key bytes", len(pkixDER), MaxPKIXPublicKeySize)
	case len(proof) > MaxProofOfPossessionSize:
		return nil, limit("proof-of-possession bytes", len(proof), MaxProofOfPossessionSize)
	}
	pub, err := x509.ParsePKIXPublicKey(pkixDER)
	if err != nil {
		return nil, requestError("spec.pkixPublicKey", "not a PKIX public key", err)
	}
	if err := CheckKey(pub); err != nil {
		return nil, err
	}
	msg := []byte(podUID)
	sum := sha256.Sum256(msg)
	ok := false
	switch k := pub.(type) {
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, msg, proof)
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, sum[:], proof)
	case *rsa.PublicKey:
		ok = rsa.VerifyPSS(k, crypto.SHA256, sum[:], proof, nil) == nil
	}
	if !ok {
		return nil, requestError("spec.proofOfPossession", "signature over the pod UID does not verify", nil)
	}
	return pub, nil
}

// CheckKey reports whether pub is a key pod certificates may be issued to:
// RSA with a 3072- or 4096-bit modulus, ECDSA on P-256, P-384 or P-521, or
// Ed25519, that also passes jwks.CheckPublicKey (on-curve points, a
// modest RSA exponent). The error matches jwks.ErrUnsupportedKey and names
// the key ("RSA 2048").
func CheckKey(pub crypto.PublicKey) error {
	if err := jwks.CheckPublicKey(pub); err != nil {
		return keyError(pub, err)
	}
	if k, ok := pub.(*rsa.PublicKey); ok {
		if bits := k.N.BitLen(); bits != 3072 && bits != 4096 {
			return keyError(pub, nil)
		}
	}
	return nil
}

// keyError reports a key of a type or size pod certificates do not allow.
// It matches jwks.ErrUnsupportedKey and wraps jwks' error, if any.
func keyError(pub crypto.PublicKey, cause error) error {
	return wrap(jwks.ErrUnsupportedKey, "key "+keyname.Of(pub)+" is not supported (want RSA 3072 or 4096, ECDSA P-256, P-384 or P-521, or Ed25519)", cause)
}
