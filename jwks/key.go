package jwks

import (
	"crypto"
	"fmt"
)

// Key is a public verification key with the metadata a key set carries.
// Keys are values: copy them freely. Build them with [NewKey] (or
// [NewKeyWithID]) so that the key is checked and reduced to its public
// half; [Key.Check] checks one built by hand.
type Key struct {
	// KeyID is the key's ID, the kid of JWS headers and JWKs. NewKey derives
	// it as Kubernetes does.
	KeyID string
	// Public is an *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey.
	Public crypto.PublicKey
	// Algorithm is the JWS algorithm the key verifies by default (RS256 for
	// RSA, the curve's ES* for ECDSA, EdDSA for Ed25519), or the alg a key
	// set declared for it.
	Algorithm string
	// ExcludeFromDiscovery marks a verify-only key: it verifies tokens but
	// is left out of published key sets and discovery documents, as
	// Kubernetes' ExcludeFromOIDCDiscovery.
	ExcludeFromDiscovery bool
}

// NewKey checks pub, reduces it to its public half, derives its key ID as
// Kubernetes does ([KeyID]) and its default algorithm ([AlgorithmFor]).
// pub is an *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey; a
// private key or any crypto.Signer (a KMS or HSM key) is accepted too and
// only its public half kept. The error matches [ErrUnsupportedKey].
func NewKey(pub crypto.PublicKey) (Key, error) {
	pub, err := PublicKey(pub)
	if err != nil {
		return Key{}, err
	}
	kid, err := KeyID(pub)
	if err != nil {
		return Key{}, err
	}
	alg, err := AlgorithmFor(pub)
	if err != nil {
		return Key{}, err
	}
	return Key{KeyID: kid, Public: pub, Algorithm: alg}, nil
}

// NewKeyWithID is NewKey with a caller-chosen key ID, for issuers whose
// kids are not Kubernetes' (RFC 7638 thumbprints, KMS key versions). An
// empty kid is an error.
func NewKeyWithID(pub crypto.PublicKey, kid string) (Key, error) {
	if kid == "" {
		return Key{}, unsupported(fmt.Sprintf("%T", pub), "empty key ID", nil)
	}
	k, err := NewKey(pub)
	if err != nil {
		return Key{}, err
	}
	k.KeyID = kid
	return k, nil
}

// Check validates a Key built by hand (or received from elsewhere): its
// public key must pass [CheckPublicKey], its KeyID must not be empty, and a
// non-empty Algorithm must fit the key ([Fits]). An empty Algorithm is
// filled in with [AlgorithmFor]. The error matches [ErrUnsupportedKey].
func (k Key) Check() (Key, error) {
	if err := CheckPublicKey(k.Public); err != nil {
		return Key{}, err
	}
	if k.KeyID == "" {
		return Key{}, unsupported(fmt.Sprintf("%T", k.Public), "empty key ID", nil)
	}
	if k.Algorithm == "" {
		k.Algorithm, _ = AlgorithmFor(k.Public)
	} else if !Fits(k.Algorithm, k.Public) {
		return Key{}, unsupported(fmt.Sprintf("%T", k.Public), fmt.Sprintf("algorithm %q does not fit the key", k.Algorithm), nil)
	}
	return k, nil
}

// checkKeys checks every key of a list, naming the position of the first
// that fails.
func checkKeys(keys []Key) ([]Key, error) {
	out := make([]Key, 0, len(keys))
	for i, key := range keys {
		k, err := key.Check()
		if err != nil {
			return nil, &MemberError{Index: i, KeyID: key.KeyID, Kind: ErrUnsupportedKey, Err: err}
		}
		out = append(out, k)
	}
	return out, nil
}
