package x509sa

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
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

// keyUsageFor returns the key usage of a leaf with this public key: digital
// signature, plus key encipherment for RSA (RSA key exchange in TLS 1.2).
func keyUsageFor(pub crypto.PublicKey) x509.KeyUsage {
	ku := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		ku |= x509.KeyUsageKeyEncipherment
	}
	return ku
}

// checkUsageShape reports why hosts or a SPIFFE ID cannot go with u.
func checkUsageShape(u Usage, hosts int, spiffe bool) error {
	if hosts > 0 && !u.Has(ServerAuth) {
		return usageError(u.String(), "serve hosts need ServerAuth")
	}
	if spiffe && u != ClientAndServerAuth {
		return usageError(u.String(), "an X509-SVID needs both ClientAuth and ServerAuth")
	}
	return nil
}

// resolveUsage combines a usage given outside the request (spec.usages,
// a caller's choice) with the one the request asks for: either may be zero,
// both must agree, and the result must fit the request's hosts and SPIFFE
// ID.
func resolveUsage(given Usage, csr *CSR) (Usage, error) {
	if given != 0 && !given.valid() {
		return 0, usageError(given.String(), "unknown usage bits")
	}
	usage := given
	switch {
	case given == 0:
		usage = csr.Usage
	case csr.Usage != 0 && csr.Usage != given:
		return 0, usageError(given.String(), "differs from the request's extended key usage "+csr.Usage.String())
	}
	if usage == 0 {
		return 0, usageError(usage.String(), "no usage given and the request asks for none")
	}
	if err := checkUsageShape(usage, len(csr.DNSNames)+len(csr.IPAddresses), !csr.SPIFFEID.IsZero()); err != nil {
		return 0, err
	}
	return usage, nil
}

// usageError reports usages that are unknown, missing, inconsistent with
// each other or with the request, or not allowed: what names the usage (a
// Usage's String, or a quoted value). It matches [ErrInvalidUsage].
func usageError(what, reason string) error {
	return wrap(ErrInvalidUsage, "usage "+what+": "+reason, nil)
}
