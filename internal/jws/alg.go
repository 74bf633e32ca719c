package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
)

// family is the key type an algorithm signs with.
type family uint8

const (
	familyRSA family = iota + 1
	familyRSAPSS
	familyEC
	familyEdDSA
)

// algorithm is one row of the table: everything the module knows about a
// JWS algorithm.
type algorithm struct {
	name   string
	hash   crypto.Hash // 0 for EdDSA, which signs the message itself
	family family
	curve  func() elliptic.Curve
}

// table holds every asymmetric algorithm the module signs and verifies with
// (RFC 7518, RFC 8037, RFC 9864's Ed25519). none and HMAC are absent: they
// are never accepted.
var table = [...]algorithm{
	{name: "RS256", hash: crypto.SHA256, family: familyRSA},
	{name: "ES256", hash: crypto.SHA256, family: familyEC, curve: elliptic.P256},
	{name: "ES384", hash: crypto.SHA384, family: familyEC, curve: elliptic.P384},
	{name: "ES512", hash: crypto.SHA512, family: familyEC, curve: elliptic.P521},
	{name: "EdDSA", family: familyEdDSA},
	{name: "Ed25519", family: familyEdDSA},
	{name: "RS384", hash: crypto.SHA384, family: familyRSA},
	{name: "RS512", hash: crypto.SHA512, family: familyRSA},
	{name: "PS256", hash: crypto.SHA256, family: familyRSAPSS},
	{name: "PS384", hash: crypto.SHA384, family: familyRSAPSS},
	{name: "PS512", hash: crypto.SHA512, family: familyRSAPSS},
}

// lookup returns the row of alg.
func lookup(alg string) (algorithm, bool) {
	for _, a := range table {
		if a.name == alg {
			return a, true
		}
	}
	return algorithm{}, false
}

// Known reports whether alg is an algorithm of the table: asymmetric, and
// never none or HMAC.
func Known(alg string) bool {
	_, ok := lookup(alg)
	return ok
}

// Names returns the names of the table's algorithms, in a new slice.
func Names() []string {
	names := make([]string, len(table))
	for i, a := range table {
		names[i] = a.name
	}
	return names
}

// Intern returns the table's own string for a known algorithm name, without
// allocating, or a copy of an unknown one.
func Intern(name []byte) string {
	for _, a := range table {
		if string(name) == a.name {
			return a.name
		}
	}
	return string(name)
}

// Fits reports whether alg can verify with pub at all: RS*/PS* with an RSA
// key, the ES* of its own curve with an ECDSA key, EdDSA or Ed25519 with an
// Ed25519 key.
func Fits(alg string, pub crypto.PublicKey) bool {
	a, ok := lookup(alg)
	if !ok {
		return false
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k != nil && (a.family == familyRSA || a.family == familyRSAPSS)
	case *ecdsa.PublicKey:
		return k != nil && k.Curve != nil && a.family == familyEC && a.curve() == k.Curve
	case ed25519.PublicKey:
		return a.family == familyEdDSA
	}
	return false
}

// CurveAlgorithm returns the ES* algorithm of a curve, or "" for a curve
// the module does not use.
func CurveAlgorithm(c elliptic.Curve) string {
	for _, a := range table {
		if a.family == familyEC && a.curve() == c {
			return a.name
		}
	}
	return ""
}

// curveSize returns the byte size of a coordinate of k's curve and the
// curve's algorithm, or 0 and "" for another curve.
func curveSize(k *ecdsa.PublicKey) (int, string) {
	if k.Curve == nil {
		return 0, ""
	}
	alg := CurveAlgorithm(k.Curve)
	if alg == "" {
		return 0, ""
	}
	return (k.Curve.Params().BitSize + 7) / 8, alg
}
