// Package keyname names public keys in messages, one way across ksa: "RSA
// 2048", "ECDSA P-256", "Ed25519", with the defect for a nil or malformed
// key, and the Go type for any other.
package keyname

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"strconv"
)

// Of names pub's type and size. It never panics, whatever pub holds.
func Of(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k == nil || k.N == nil {
			return "RSA (nil)"
		}
		return "RSA " + strconv.Itoa(k.N.BitLen())
	case *ecdsa.PublicKey:
		if k == nil || k.Curve == nil {
			return "ECDSA (nil)"
		}
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return "Ed25519 (malformed)"
		}
		return "Ed25519"
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", pub)
}
