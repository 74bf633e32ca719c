package x509sa

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"strconv"
)

// checkPublicKey accepts the key types this package issues to and signs
// with: RSA of MinRSABits to MaxRSABits, ECDSA on P-256, P-384 or P-521, and
// Ed25519. (Kubernetes' pod certificates accept RSA only at 3072 or 4096
// bits; the kube-apiserver-client signer accepts any key.)
func checkPublicKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k == nil || k.N == nil {
			return &KeyError{Key: "RSA (nil)"}
		}
		if bits := k.N.BitLen(); bits < MinRSABits || bits > MaxRSABits {
			return &KeyError{Key: "RSA-" + strconv.Itoa(bits)}
		}
	case *ecdsa.PublicKey:
		if k == nil || k.Curve == nil {
			return &KeyError{Key: "ECDSA (nil)"}
		}
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return &KeyError{Key: "ECDSA " + k.Curve.Params().Name}
		}
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return &KeyError{Key: "Ed25519 (malformed)"}
		}
	case nil:
		return &KeyError{Key: "none"}
	default:
		return &KeyError{Key: fmt.Sprintf("%T", pub)}
	}
	return nil
}

// signatureAlgorithm picks the signature algorithm for a signer's key the
// way client-go's CSR helper does for RSA (SHA-512 from 4096 bits, SHA-384
// from 3072, else SHA-256); for other keys crypto/x509's default (matched to
// the curve) is used.
func signatureAlgorithm(pub crypto.PublicKey) x509.SignatureAlgorithm {
	if k, ok := pub.(*rsa.PublicKey); ok {
		switch bits := k.N.BitLen(); {
		case bits >= 4096:
			return x509.SHA512WithRSA
		case bits >= 3072:
			return x509.SHA384WithRSA
		default:
			return x509.SHA256WithRSA
		}
	}
	return x509.UnknownSignatureAlgorithm
}
