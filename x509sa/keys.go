package x509sa

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"

	"github.com/ksa-go/ksa/internal/keyname"
	"github.com/ksa-go/ksa/jwks"
)

// checkPublicKey accepts the key types this package issues to and signs
// with, as jwks.CheckPublicKey does: RSA of jwks.MinRSABits to
// jwks.MaxRSABits (exponent up to jwks.MaxRSAExponent), ECDSA on P-256,
// P-384 or P-521, and Ed25519; the error matches jwks.ErrUnsupportedKey
// and names the key ("RSA 1024"). (Kubernetes' pod certificates accept RSA
// only at 3072 or 4096 bits; the kube-apiserver-client signer accepts any
// key.)
func checkPublicKey(pub crypto.PublicKey) error {
	err := jwks.CheckPublicKey(pub)
	if err == nil {
		return nil
	}
	return wrap(jwks.ErrUnsupportedKey, "key "+keyname.Of(pub)+" is not supported", err)
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
