package jwks

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// KeyID derives a key ID exactly as Kubernetes does for the keys it signs and
// verifies with: the unpadded base64url encoding of the SHA-256 digest of
// the DER SubjectPublicKeyInfo. The result is always 43 characters. key may
// be a public key, a private key or any crypto.Signer; only its public half
// is used.
func KeyID(key crypto.PublicKey) (string, error) {
	pub, err := PublicKey(key)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", unsupported(fmt.Sprintf("%T", pub), "cannot encode SubjectPublicKeyInfo", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// Thumbprint returns the RFC 7638 JWK thumbprint of the key (SHA-256,
// unpadded base64url), the alternative key ID many OIDC issuers use. key may
// be public or private; only its public half is used.
func Thumbprint(key crypto.PublicKey) (string, error) {
	pub, err := PublicKey(key)
	if err != nil {
		return "", err
	}
	// RFC 7638 §3.2: the required members only, in lexicographic order,
	// no whitespace.
	var b []byte
	switch k := pub.(type) {
	case *rsa.PublicKey:
		b = append(b, `{"e":`...)
		b = appendB64(b, rsaExponent(k.E))
		b = append(b, `,"kty":"RSA","n":`...)
		b = appendB64(b, k.N.Bytes())
		b = append(b, '}')
	case *ecdsa.PublicKey:
		x, y, crv := ecCoordinates(k)
		b = append(b, `{"crv":`...)
		b = jsonx.AppendString(b, crv)
		b = append(b, `,"kty":"EC","x":`...)
		b = appendB64(b, x)
		b = append(b, `,"y":`...)
		b = appendB64(b, y)
		b = append(b, '}')
	case ed25519.PublicKey:
		b = append(b, `{"crv":"Ed25519","kty":"OKP","x":`...)
		b = appendB64(b, k)
		b = append(b, '}')
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// PublicKey returns the public half of key and checks it with
// [CheckPublicKey]. Private keys and crypto.Signer values are reduced to
// their public key; public keys are returned as they are.
func PublicKey(key crypto.PublicKey) (crypto.PublicKey, error) {
	if key == nil {
		return nil, unsupported("<nil>", "no key", nil)
	}
	// The standard private keys' Public methods panic on a nil pointer or
	// a short Ed25519 key.
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k == nil {
			return nil, unsupported("*rsa.PrivateKey", "nil key", nil)
		}
	case *ecdsa.PrivateKey:
		if k == nil {
			return nil, unsupported("*ecdsa.PrivateKey", "nil key", nil)
		}
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, unsupported("ed25519.PrivateKey", fmt.Sprintf("%d bytes, want %d", len(k), ed25519.PrivateKeySize), nil)
		}
	}
	pub := key
	if s, ok := key.(interface{ Public() crypto.PublicKey }); ok {
		pub = s.Public()
	}
	if err := CheckPublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// rsaExponent returns the minimal big-endian bytes of e.
func rsaExponent(e int) []byte {
	var b []byte
	for v := uint64(e); v > 0; v >>= 8 {
		b = append([]byte{byte(v)}, b...)
	}
	return b
}

// ecCoordinates returns the fixed-width x and y of a checked key, and the
// JWK curve name.
func ecCoordinates(k *ecdsa.PublicKey) (x, y []byte, crv string) {
	raw, _ := k.Bytes() // checked by CheckPublicKey
	n := (len(raw) - 1) / 2
	return raw[1 : 1+n], raw[1+n:], k.Curve.Params().Name
}

func appendB64(dst, src []byte) []byte {
	dst = append(dst, '"')
	dst = base64.RawURLEncoding.AppendEncode(dst, src)
	return append(dst, '"')
}
