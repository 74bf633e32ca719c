package x509sa

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// Usage is the set of roles a certificate is for: client authentication,
// server authentication, or both. The zero value is "none"; functions that
// take a Usage document what zero means for them.
type Usage uint8

// The usages. Every certificate this package issues also has the key usage
// digital signature, and key encipherment when its key is RSA.
const (
	// ClientAuth: the certificate authenticates a client (TLS
	// id-kp-clientAuth, Kubernetes "client auth").
	ClientAuth Usage = 1 << iota
	// ServerAuth: the certificate authenticates a server (TLS
	// id-kp-serverAuth, Kubernetes "server auth").
	ServerAuth
)

// ClientAndServerAuth is both usages, as an X509-SVID requires.
const ClientAndServerAuth = ClientAuth | ServerAuth

// String returns "client", "server", "client+server" or "none" (or
// "invalid" for bits that are no usage).
func (u Usage) String() string {
	switch u {
	case 0:
		return "none"
	case ClientAuth:
		return "client"
	case ServerAuth:
		return "server"
	case ClientAndServerAuth:
		return "client+server"
	}
	return "invalid"
}

// Has reports whether every usage in v is in u.
func (u Usage) Has(v Usage) bool { return u&v == v }

// valid reports whether u is a non-empty set of known usages.
func (u Usage) valid() bool { return u != 0 && u&^ClientAndServerAuth == 0 }

// ExtKeyUsages returns the extended key usages of u, client before server.
func (u Usage) ExtKeyUsages() []x509.ExtKeyUsage {
	out := make([]x509.ExtKeyUsage, 0, 2)
	if u.Has(ClientAuth) {
		out = append(out, x509.ExtKeyUsageClientAuth)
	}
	if u.Has(ServerAuth) {
		out = append(out, x509.ExtKeyUsageServerAuth)
	}
	return out
}

// KubernetesUsages returns the spec.usages of a CertificateSigningRequest
// for u and a key: "digital signature", "key encipherment" for RSA keys
// only (as the kubelet requests them), then "client auth" and/or "server
// auth". The kubernetes.io/kube-apiserver-client signer accepts the result
// for ClientAuth.
func (u Usage) KubernetesUsages(pub crypto.PublicKey) []certificatesv1.KeyUsage {
	out := make([]certificatesv1.KeyUsage, 0, 4)
	out = append(out, certificatesv1.UsageDigitalSignature)
	if _, ok := pub.(*rsa.PublicKey); ok {
		out = append(out, certificatesv1.UsageKeyEncipherment)
	}
	if u.Has(ClientAuth) {
		out = append(out, certificatesv1.UsageClientAuth)
	}
	if u.Has(ServerAuth) {
		out = append(out, certificatesv1.UsageServerAuth)
	}
	return out
}

// UsageFromKubernetes reads a CertificateSigningRequest's spec.usages.
// Accepted strings are "digital signature", "key encipherment", "client
// auth" and "server auth", each at most once, with at least one of the last
// two; anything else (Kubernetes knows 23 usages) is a *[UsageError], since
// identity certificates have no other use.
func UsageFromKubernetes(usages []certificatesv1.KeyUsage) (Usage, error) {
	var u Usage
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
			u |= ClientAuth
		case certificatesv1.UsageServerAuth:
			i = 3
			u |= ServerAuth
		default:
			return 0, &UsageError{Value: string(ku), Reason: "not a usage of identity certificates"}
		}
		if seen[i] {
			return 0, &UsageError{Value: string(ku), Reason: "duplicate usage"}
		}
		seen[i] = true
	}
	if u == 0 {
		return 0, &UsageError{Reason: `neither "client auth" nor "server auth" is requested`}
	}
	return u, nil
}

// keyUsageFor returns the key usage of a leaf with this public key: digital
// signature, plus key encipherment for RSA (RSA key exchange in TLS 1.2).
func keyUsageFor(pub crypto.PublicKey) x509.KeyUsage {
	ku := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		ku |= x509.KeyUsageKeyEncipherment
	}
	return ku
}

// checkUsageShape returns why hosts or a SPIFFE ID cannot go with u, or "".
func checkUsageShape(u Usage, hosts int, spiffe bool) *UsageError {
	if hosts > 0 && !u.Has(ServerAuth) {
		return &UsageError{Usage: u, Reason: "serve hosts need ServerAuth"}
	}
	if spiffe && u != ClientAndServerAuth {
		return &UsageError{Usage: u, Reason: "an X509-SVID needs both ClientAuth and ServerAuth"}
	}
	return nil
}
