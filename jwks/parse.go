package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"math/big"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jws"
)

// Limits ParseSet applies when ParseOptions leaves them zero.
const (
	// DefaultMaxSetBytes is the largest key set document accepted: 256 KiB,
	// room for about a hundred RSA keys with certificate chains.
	DefaultMaxSetBytes = 256 << 10
	// DefaultMaxKeys is the largest number of keys in one set.
	DefaultMaxKeys = 100
)

// ParseOptions bounds ParseSet. The zero value applies the defaults.
type ParseOptions struct {
	// MaxBytes is the largest document accepted; zero means
	// DefaultMaxSetBytes.
	MaxBytes int
	// MaxKeys is the largest number of keys accepted; zero means
	// DefaultMaxKeys.
	MaxKeys int
}

// Set is a key set read by ParseSet: the usable keys in document order,
// and the keys that were skipped with the reason for each.
type Set struct {
	Keys    []Key
	Skipped []*MemberError
}

// ParseSet reads a JWKS document for verification, strictly. The document
// must be strict JSON within the size and key-count limits, an object with
// one "keys" array (and no member spelling "keys" in another case);
// otherwise the whole set is refused with an error matching
// [ErrMalformedSet] or [ErrSetTooLarge].
//
// Keys are then taken one by one; a key that cannot be used is skipped, with
// its reason recorded in Set.Skipped, and never fails the others. A key is
// skipped when it is not an object, repeats a member, has a member whose
// name differs from a JWK member's only in case, holds any private or
// symmetric member (in any case), has a kty other than RSA, EC or OKP, a
// curve other than P-256/P-384/P-521/Ed25519, a member that is not strict
// unpadded base64url or has the wrong length, an RSA key [CheckPublicKey]
// refuses (a modulus outside [MinRSABits]..[MaxRSABits] bits or even, an
// exponent that is even or outside [3, [MaxRSAExponent]]), an EC point off its curve,
// use other than "sig", key_ops without "verify", or an alg that does not
// fit the key, or holds a private or symmetric member anywhere inside one of
// its other members. Member names the Skipped entry's Member reports are as
// written in the document. A key without alg gets the default algorithm
// of its type ([AlgorithmFor]).
func ParseSet(doc []byte, opts ParseOptions) (*Set, error) {
	maxBytes, maxKeys := opts.MaxBytes, opts.MaxKeys
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSetBytes
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	if len(doc) > maxBytes {
		return nil, errs.Wrap(prefix, ErrSetTooLarge, fmt.Sprintf("document of %d bytes is over the %d-byte limit", len(doc), maxBytes), nil)
	}
	set := &Set{}
	err := walkSet(doc, maxKeys, func(j *rawJWK) {
		k, merr := j.key()
		if merr != nil {
			merr.KeyID = j.kid
			set.Skipped = append(set.Skipped, merr)
			return
		}
		set.Keys = append(set.Keys, k)
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// key turns a raw JWK into a Key, or says why it cannot.
func (j *rawJWK) key() (Key, *MemberError) {
	// Private material first: it is the gravest reason to skip a key.
	if len(j.private) > 0 {
		return Key{}, &MemberError{Index: j.index, Member: j.private[0], Reason: "private or symmetric key member", Kind: ErrPrivateMaterial}
	}
	if j.hasNested {
		return Key{}, &MemberError{Index: j.index, Member: j.nested, Reason: "holds a private or symmetric key member", Kind: ErrPrivateMaterial}
	}
	if j.problem != nil {
		return Key{}, j.problem
	}
	bad := func(member, reason string, err error) (Key, *MemberError) {
		return Key{}, &MemberError{Index: j.index, Member: member, Reason: reason, Kind: ErrUnsupportedKey, Err: err}
	}
	if j.use != "" && j.use != "sig" {
		return bad("use", fmt.Sprintf("use %q is not \"sig\"", j.use), nil)
	}
	if j.hasKeyOps && !j.keyOpVerify {
		return bad("key_ops", `key_ops does not allow "verify"`, nil)
	}
	var pub any
	keyMember := "x" // the member CheckPublicKey's verdict is about
	switch j.kty {
	case "RSA":
		n, err := decodeMember(j.n)
		if err != nil || len(n) == 0 {
			return bad("n", "missing or not unpadded base64url", err)
		}
		e, err := decodeMember(j.e)
		if err != nil || len(e) == 0 || len(e) > 4 {
			return bad("e", "missing, not unpadded base64url, or longer than 4 bytes", err)
		}
		var exp uint64
		for _, c := range e {
			exp = exp<<8 | uint64(c)
		}
		if exp < 3 || exp%2 == 0 || exp > MaxRSAExponent {
			return bad("e", fmt.Sprintf("public exponent %d is not an odd number in [3, %d]", exp, MaxRSAExponent), nil)
		}
		pub = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}
		keyMember = "n"
	case "EC":
		var curve elliptic.Curve
		switch string(j.crv) {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return bad("crv", fmt.Sprintf("curve %q is not P-256, P-384 or P-521", j.crv), nil)
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err := decodeMember(j.x)
		if err != nil || len(x) != size {
			return bad("x", fmt.Sprintf("missing, not unpadded base64url, or not %d bytes", size), err)
		}
		y, err := decodeMember(j.y)
		if err != nil || len(y) != size {
			return bad("y", fmt.Sprintf("missing, not unpadded base64url, or not %d bytes", size), err)
		}
		point := make([]byte, 0, 1+2*size)
		point = append(append(append(point, 4), x...), y...)
		ec, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return bad("x", "point is not on the curve", err)
		}
		pub = ec
	case "OKP":
		if string(j.crv) != "Ed25519" {
			return bad("crv", fmt.Sprintf("curve %q is not Ed25519", j.crv), nil)
		}
		x, err := decodeMember(j.x)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return bad("x", "missing, not unpadded base64url, or not 32 bytes", err)
		}
		pub = ed25519.PublicKey(x)
	default:
		return Key{}, &MemberError{Index: j.index, Member: "kty", Reason: fmt.Sprintf("key type %q is not RSA, EC or OKP", j.kty), Kind: ErrUnknownKeyType}
	}
	if err := CheckPublicKey(pub); err != nil {
		return bad(keyMember, "key refused", err)
	}
	alg := j.alg
	if alg == "" {
		alg, _ = AlgorithmFor(pub)
	} else if !Fits(alg, pub) {
		return bad("alg", fmt.Sprintf("algorithm %q does not fit a %s key", alg, j.kty), nil)
	}
	return Key{KeyID: j.kid, Public: pub, Algorithm: alg}, nil
}

func decodeMember(v []byte) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return jws.Decode(string(v), nil)
}
