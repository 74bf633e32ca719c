// Package ownkey makes a signer's own copy of a standard-library private
// key: the one home of the rule that lets ksa skip verifying each
// signature of a key it can trust.
//
// A signature is verified before it is handed out because a signer may
// sign with another key than the one published, or corrupt its answer: a
// KMS or HSM key version that changed, a fault. A key of crypto/ecdsa,
// crypto/ed25519 or crypto/rsa copied by [Copy] cannot: its public half is
// derived again from its private half, so a key whose halves disagree (a
// struct filled by hand) is refused, and the copy is the caller's alone,
// so nobody changes it afterwards. One probe signature verified when the
// copy is made then proves the key and its algorithm; any other signer
// stays verified on every signature.
package ownkey

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
)

// Copy returns a copy of a key of crypto/ecdsa, crypto/ed25519 or
// crypto/rsa whose public half is derived from its private half, and true;
// any other signer is returned as it is, with false. A standard-library key
// whose halves are inconsistent is an error.
func Copy(key crypto.Signer) (crypto.Signer, bool, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		raw, err := k.Bytes()
		if err != nil {
			return nil, false, err
		}
		c, err := ecdsa.ParseRawPrivateKey(k.Curve, raw)
		if err != nil {
			return nil, false, err
		}
		return c, true, nil
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, false, fmt.Errorf("an Ed25519 private key of %d bytes, not %d", len(k), ed25519.PrivateKeySize)
		}
		return ed25519.NewKeyFromSeed(k.Seed()), true, nil
	case *rsa.PrivateKey:
		if err := k.Validate(); err != nil {
			return nil, false, err
		}
		c, err := x509.ParsePKCS1PrivateKey(x509.MarshalPKCS1PrivateKey(k))
		if err != nil {
			return nil, false, err
		}
		return c, true, nil
	}
	return key, false, nil
}
