package jwks

import (
	"crypto"
	"fmt"
)

// Key is a public verification key with the metadata a key set carries.
// Keys are values: copy them freely. Build them with [NewKey] (or
// [NewKeyWithID]) so that the key is checked and reduced to its public half.
type Key struct {
	// ID is the key ID (kid). NewKey derives it as Kubernetes does.
	ID string
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

// NewKey checks key, reduces it to its public half, derives its ID as
// Kubernetes does ([KeyID]) and its default algorithm ([AlgorithmFor]).
// key may be a public key, a private key, a crypto.Signer (a KMS or HSM
// key), or a Key, which is re-checked and keeps its ID, algorithm and flag.
func NewKey(key any) (Key, error) {
	if k, ok := key.(Key); ok {
		return checkKey(k)
	}
	pub, err := PublicKey(key)
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
	return Key{ID: kid, Public: pub, Algorithm: alg}, nil
}

// NewKeyWithID is NewKey with a caller-chosen key ID, for issuers whose
// kids are not Kubernetes' (RFC 7638 thumbprints, KMS key versions). An
// empty id is an error.
func NewKeyWithID(key any, id string) (Key, error) {
	if id == "" {
		return Key{}, &KeyTypeError{Type: fmt.Sprintf("%T", key), Reason: "empty key ID"}
	}
	k, err := NewKey(key)
	if err != nil {
		return Key{}, err
	}
	k.ID = id
	return k, nil
}

// checkKey validates a Key built by hand.
func checkKey(k Key) (Key, error) {
	if err := CheckPublicKey(k.Public); err != nil {
		return Key{}, err
	}
	if k.ID == "" {
		return Key{}, &KeyTypeError{Type: fmt.Sprintf("%T", k.Public), Reason: "empty key ID"}
	}
	if k.Algorithm == "" {
		k.Algorithm, _ = AlgorithmFor(k.Public)
	} else if !Fits(k.Algorithm, k.Public) {
		return Key{}, &KeyTypeError{Type: fmt.Sprintf("%T", k.Public), Reason: fmt.Sprintf("algorithm %q does not fit the key", k.Algorithm)}
	}
	return k, nil
}

// Keys applies NewKey to each argument, stopping at the first error, which
// names the argument's position.
func Keys(keys ...any) ([]Key, error) {
	out := make([]Key, 0, len(keys))
	for i, key := range keys {
		k, err := NewKey(key)
		if err != nil {
			return nil, fmt.Errorf("jwks: key #%d: %w", i, err)
		}
		out = append(out, k)
	}
	return out, nil
}
