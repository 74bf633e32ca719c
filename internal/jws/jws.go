// Package jws signs and verifies JWS signatures (RFC 7515, RFC 7518,
// RFC 8037) with Go's crypto packages directly. It has no notion of
// headers or claims; the tokens package builds those.
package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/view"
)

// Errors; callers wrap them in their own errors.
var (
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrAlgorithm: the algorithm is unknown or does not fit the key.
	ErrAlgorithm = errors.New("algorithm does not fit the key")
)

// detail returns an error matching kind that reads kind's words, then the
// detail: "algorithm does not fit the key: ES256 with a *rsa.PublicKey".
func detail(kind error, format string, args ...any) error {
	return errs.Wrap("", kind, "", fmt.Errorf(format, args...))
}

// hashFor returns the digest algorithm of alg, or 0 for EdDSA, and whether
// alg is known.
func hashFor(alg string) (crypto.Hash, bool) {
	a, ok := lookup(alg)
	return a.hash, ok
}

// digest hashes msg with h.
func digest(h crypto.Hash, msg []byte) []byte {
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256(msg)
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	default:
		d := sha512.Sum512(msg)
		return d[:]
	}
}

// Verify checks that sig is a valid alg signature of signingInput under pub.
// The algorithm must fit the key type (and, for ECDSA, its curve); the
// caller decides beforehand whether alg is allowed at all.
func Verify(alg string, pub crypto.PublicKey, signingInputString string, sig []byte) error {
	// The hash functions only read their input: view the string's bytes
	// instead of copying a token-sized buffer.
	signingInput := view.Bytes(signingInputString)
	h, ok := hashFor(alg)
	if !ok {
		return detail(ErrAlgorithm, "unknown algorithm %q", alg)
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		switch alg[0] {
		case 'R':
			if rsa.VerifyPKCS1v15(k, h, digest(h, signingInput), sig) != nil {
				return ErrBadSignature
			}
			return nil
		case 'P':
			if rsa.VerifyPSS(k, h, digest(h, signingInput), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h}) != nil {
				return ErrBadSignature
			}
			return nil
		}
	case *ecdsa.PublicKey:
		size, curveAlg := curveSize(k)
		if alg != curveAlg {
			break
		}
		if len(sig) != 2*size {
			return detail(ErrBadSignature, "%d-byte signature, want %d", len(sig), 2*size)
		}
		der, ok := rawToDER(sig[:size], sig[size:])
		if !ok || !ecdsa.VerifyASN1(k, digest(h, signingInput), der) {
			return ErrBadSignature
		}
		return nil
	case ed25519.PublicKey:
		if h != 0 {
			break
		}
		if len(k) != ed25519.PublicKeySize || !ed25519.Verify(k, signingInput, sig) {
			return ErrBadSignature
		}
		return nil
	}
	return detail(ErrAlgorithm, "%s with a %T", alg, pub)
}

// Sign signs signingInput with signer for alg. For ECDSA the signer's ASN.1
// signature is converted to the fixed-width R||S form JWS uses.
func Sign(alg string, signer crypto.Signer, signingInput []byte) ([]byte, error) {
	h, ok := hashFor(alg)
	if !ok {
		return nil, detail(ErrAlgorithm, "unknown algorithm %q", alg)
	}
	switch pub := signer.Public().(type) {
	case *rsa.PublicKey:
		switch alg[0] {
		case 'R':
			return signer.Sign(rand.Reader, digest(h, signingInput), h)
		case 'P':
			return signer.Sign(rand.Reader, digest(h, signingInput), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h})
		}
	case *ecdsa.PublicKey:
		size, curveAlg := curveSize(pub)
		if alg != curveAlg {
			break
		}
		der, err := signer.Sign(rand.Reader, digest(h, signingInput), h)
		if err != nil {
			return nil, err
		}
		sig, ok := derToRaw(der, size)
		if !ok {
			return nil, errors.New("signer returned a malformed ECDSA signature")
		}
		return sig, nil
	case ed25519.PublicKey:
		if h != 0 {
			break
		}
		return signer.Sign(rand.Reader, signingInput, crypto.Hash(0))
	}
	return nil, detail(ErrAlgorithm, "%s with a %T", alg, signer.Public())
}
