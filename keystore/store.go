package keystore

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"strconv"
)

// MaxRemoteCalls bounds the signing calls to one key of a remote key store
// (AWS KMS, Google Cloud KMS, Azure Key Vault) in flight at once: 64. A
// store that stops answering holds at most this many calls, each ending
// within its client's own deadline; later signatures wait for one to end,
// or for their caller's context. The remote stores' Config.MaxCalls
// changes it.
const MaxRemoteCalls = 64

// Creator makes keys in a key store, as "ksa issuer keygen --out URI"
// does. Create reads ref with [ParseNewKeyRef] (a key to create: an AWS
// KMS name instead of a key ID, a Cloud KMS key without its version),
// makes a key of spec there and returns its complete reference, the one
// that opens it, and its public key. A store never replaces a key. The
// errors are those of [Opener.Open]; a spec the store does not make
// matches [ErrKeyStore], one outside jwks' key rules
// jwks.ErrUnsupportedKey.
type Creator interface {
	Create(ctx context.Context, ref string, spec KeySpec) (Created, error)
}

// KeySpec says what key [Creator.Create] makes: with RSA an RSA key of
// Bits bits (2048 to 8192; stores make 2048, 3072 and 4096), otherwise an
// ECDSA key on Curve (P-256, P-384 or P-521). The zero value is an ECDSA
// P-256 key.
type KeySpec struct {
	// RSA makes an RSA key of Bits bits.
	RSA  bool
	Bits int
	// Curve is the curve of an ECDSA key; nil means P-256.
	Curve elliptic.Curve
}

// String names the key: "RSA 2048", "ECDSA P-256".
func (s KeySpec) String() string {
	if s.RSA {
		return "RSA " + strconv.Itoa(s.Bits)
	}
	if s.Curve == nil {
		return "ECDSA P-256"
	}
	if p := s.Curve.Params(); p != nil {
		return "ECDSA " + p.Name
	}
	return "ECDSA (unnamed curve)"
}

// Created is a key [Creator.Create] made.
type Created struct {
	// Ref names the key for every later use: for AWS KMS with the key ID
	// the store chose, for Cloud KMS and Key Vault with its version, for
	// PKCS #11 the reference as given.
	Ref string
	// Public is the key's public half.
	Public crypto.PublicKey
}
