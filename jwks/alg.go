package jwks

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"

	"github.com/ksa-go/ksa/internal/jws"
)

// JWS algorithm names (RFC 7518, RFC 8037, RFC 9864).
const (
	RS256 = "RS256"
	RS384 = "RS384"
	RS512 = "RS512"
	PS256 = "PS256"
	PS384 = "PS384"
	PS512 = "PS512"
	ES256 = "ES256"
	ES384 = "ES384"
	ES512 = "ES512"
	// EdDSA is the algorithm name RFC 8037 gives Ed25519 signatures.
	EdDSA = "EdDSA"
	// Ed25519 is RFC 9864's fully specified name for the same signatures.
	Ed25519 = "Ed25519"
)

// MinRSABits is the smallest RSA modulus ksa accepts, for signing, for
// verification and in key sets.
const MinRSABits = 2048

// MaxRSAExponent is the largest RSA public exponent ksa accepts: 65537,
// what every key generator uses (crypto/rsa, OpenSSL, cloud KMSs). The cost
// of a verification grows with the exponent's bit length, so a key set
// holding keys with exponents near 2^31 would make each forged token check
// cost about twice as much as with 65537.
const MaxRSAExponent = 1<<16 + 1

// MaxRSABits is the largest RSA modulus ksa accepts. Verifying with an RSA
// key costs time growing with the square of its size, so a key set holding
// a huge modulus (a megabit fits in a key set of the default size limit)
// would make every verification with it take seconds. The bound is the
// one crypto/tls applies to certificate keys (CVE-2023-29409).
const MaxRSABits = 8192

// AlgorithmFor returns the one algorithm a public key signs with by default,
// as Kubernetes chooses it: RS256 for RSA, ES256/ES384/ES512 for P-256,
// P-384 and P-521, and (beyond Kubernetes) EdDSA for Ed25519. The key must
// be a public key accepted by [CheckPublicKey].
func AlgorithmFor(pub crypto.PublicKey) (string, error) {
	if err := CheckPublicKey(pub); err != nil {
		return "", err
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return RS256, nil
	case *ecdsa.PublicKey:
		return ecAlgorithm(k.Curve), nil
	default: // ed25519.PublicKey, the only other kind CheckPublicKey allows
		return EdDSA, nil
	}
}

func ecAlgorithm(c elliptic.Curve) string { return jws.CurveAlgorithm(c) }

// Fits reports whether alg is an algorithm the public key can verify at all:
// any RS*/PS* for RSA, only the ES* of its own curve for ECDSA, EdDSA or
// Ed25519 for Ed25519. Whether a validator allows it is a separate policy.
func Fits(alg string, pub crypto.PublicKey) bool { return jws.Fits(alg, pub) }

// CheckPublicKey reports whether pub is a public key ksa can use: an
// *rsa.PublicKey with an odd modulus of [MinRSABits] to [MaxRSABits] bits
// and an odd exponent in [3, [MaxRSAExponent]]; an *ecdsa.PublicKey on P-256, P-384 or
// P-521 whose point is on the curve; or a 32-byte ed25519.PublicKey.
// Private keys are refused here: reduce them with [PublicKey] first. The
// error matches [ErrUnsupportedKey].
func CheckPublicKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k == nil || k.N == nil {
			return unsupported("*rsa.PublicKey", "nil key", nil)
		}
		if k.N.Sign() <= 0 || k.N.Bit(0) == 0 {
			// crypto/rsa refuses even moduli when verifying; a negative one
			// would be written to a JWK as its absolute value.
			return unsupported("*rsa.PublicKey", "modulus is not a positive odd number", nil)
		}
		if bits := k.N.BitLen(); bits < MinRSABits {
			return unsupported("*rsa.PublicKey", fmt.Sprintf("%d-bit modulus is below the %d-bit minimum", bits, MinRSABits), nil)
		} else if bits > MaxRSABits {
			return unsupported("*rsa.PublicKey", fmt.Sprintf("%d-bit modulus is above the %d-bit maximum", bits, MaxRSABits), nil)
		}
		if k.E < 3 || k.E%2 == 0 || k.E > MaxRSAExponent {
			return unsupported("*rsa.PublicKey", fmt.Sprintf("public exponent %d is not an odd number in [3, %d]", k.E, MaxRSAExponent), nil)
		}
		return nil
	case *ecdsa.PublicKey:
		//lint:ignore SA1019 only checked: Bytes dereferences X and Y.
		if k == nil || k.Curve == nil || k.X == nil || k.Y == nil {
			return unsupported("*ecdsa.PublicKey", "nil key", nil)
		}
		if ecAlgorithm(k.Curve) == "" {
			return unsupported("*ecdsa.PublicKey", fmt.Sprintf("curve %s is not P-256, P-384 or P-521", k.Curve.Params().Name), nil)
		}
		if _, err := k.Bytes(); err != nil {
			return unsupported("*ecdsa.PublicKey", "point is not on the curve", err)
		}
		return nil
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return unsupported("ed25519.PublicKey", fmt.Sprintf("%d bytes, want %d", len(k), ed25519.PublicKeySize), nil)
		}
		return nil
	default:
		return unsupported(fmt.Sprintf("%T", pub), "not an RSA, ECDSA or Ed25519 public key", nil)
	}
}
