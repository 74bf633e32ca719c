package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// AppendJWK appends the public JWK of k to dst. The members are written from
// the public values alone, through a fixed list per key type, in the order
// Kubernetes (go-jose) writes them:
//
//	# members, in order
//	RSA: use, kty, kid, alg, n, e
//	EC:  use, kty, kid, crv, alg, x, y
//	OKP: use, kty, kid, crv, alg, x
//
// use is always "sig". Nothing else can reach the output: a Key whose Public
// field holds a private key, or any type other than the three public key
// types, is an error.
func AppendJWK(dst []byte, k Key) ([]byte, error) {
	if err := CheckPublicKey(k.Public); err != nil {
		return dst, err
	}
	if k.Algorithm != "" && !Fits(k.Algorithm, k.Public) {
		return dst, unsupported(fmt.Sprintf("%T", k.Public), fmt.Sprintf("algorithm %q does not fit the key", k.Algorithm), nil)
	}
	head := func(kty, crv string) {
		dst = append(dst, `{"use":"sig","kty":"`...)
		dst = append(dst, kty...)
		dst = append(dst, '"')
		if k.KeyID != "" {
			dst = append(dst, `,"kid":`...)
			dst = jsonx.AppendString(dst, k.KeyID)
		}
		if crv != "" {
			dst = append(dst, `,"crv":"`...)
			dst = append(dst, crv...)
			dst = append(dst, '"')
		}
		if k.Algorithm != "" {
			dst = append(dst, `,"alg":`...)
			dst = jsonx.AppendString(dst, k.Algorithm)
		}
	}
	switch pub := k.Public.(type) {
	case *rsa.PublicKey:
		head("RSA", "")
		dst = append(dst, `,"n":`...)
		dst = appendB64(dst, pub.N.Bytes())
		dst = append(dst, `,"e":`...)
		dst = appendB64(dst, rsaExponent(pub.E))
	case *ecdsa.PublicKey:
		x, y, crv := ecCoordinates(pub)
		head("EC", crv)
		dst = append(dst, `,"x":`...)
		dst = appendB64(dst, x)
		dst = append(dst, `,"y":`...)
		dst = appendB64(dst, y)
	case ed25519.PublicKey:
		head("OKP", "Ed25519")
		dst = append(dst, `,"x":`...)
		dst = appendB64(dst, pub)
	}
	return append(dst, '}'), nil
}

// MarshalJWK returns the public JWK of k (see [AppendJWK]).
func MarshalJWK(k Key) ([]byte, error) {
	return AppendJWK(make([]byte, 0, 512), k)
}

// MarshalSet returns the JWKS document {"keys":[...]} publishing keys, in
// the order given, byte-identical to the key set kube-apiserver serves for
// the same keys. Keys marked ExcludeFromDiscovery are left out. Duplicates
// are kept, as Kubernetes keeps them. A key that cannot be written is an
// error naming its position.
func MarshalSet(keys []Key) ([]byte, error) {
	b := make([]byte, 0, 64+512*len(keys))
	b = append(b, `{"keys":[`...)
	n := 0
	for i, k := range keys {
		if k.ExcludeFromDiscovery {
			// Not published, but a broken key is still an error.
			if err := CheckPublicKey(k.Public); err != nil {
				return nil, &MemberError{Index: i, KeyID: k.KeyID, Kind: ErrUnsupportedKey, Err: err}
			}
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = AppendJWK(b, k); err != nil {
			return nil, &MemberError{Index: i, KeyID: k.KeyID, Kind: ErrUnsupportedKey, Err: err}
		}
		n++
	}
	return append(b, "]}"...), nil
}
