package golangjwt_test

import (
	"crypto/ecdsa"
	"math/big"
)

// ecdsaVerify checks a JWS (r||s) ES256 signature.
func ecdsaVerify(pub *ecdsa.PublicKey, digest, sig []byte) bool {
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(pub, digest, r, s)
}
