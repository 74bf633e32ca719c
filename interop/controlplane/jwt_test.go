package controlplane_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// jwtHeader is the JOSE header of a service-account token.
type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// jwtClaims are the claims kube-apiserver puts in a bound token.
type jwtClaims struct {
	Iss string   `json:"iss"`
	Sub string   `json:"sub"`
	Aud []string `json:"aud"`
	Exp int64    `json:"exp"`
	Iat int64    `json:"iat"`
	Nbf int64    `json:"nbf"`
	Jti string   `json:"jti"`
	K8s struct {
		Namespace      string  `json:"namespace"`
		Pod            *objRef `json:"pod"`
		ServiceAccount objRef  `json:"serviceaccount"`
		WarnAfter      int64   `json:"warnafter"`
	} `json:"kubernetes.io"`
}

type objRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// parseJWT checks the signature of token with pub and returns its header
// and claims.
func parseJWT(t *testing.T, token string, pub crypto.PublicKey) (jwtHeader, jwtClaims) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	var h jwtHeader
	var c jwtClaims
	decodeSegment(t, parts[0], &h)
	decodeSegment(t, parts[1], &c)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatalf("signature: %v", err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if h.Alg != "RS256" {
			t.Fatalf("alg = %q, want RS256", h.Alg)
		}
		if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig); err != nil {
			t.Fatalf("RS256 signature: %v", err)
		}
	case *ecdsa.PublicKey:
		if h.Alg != "ES256" || len(sig) != 64 {
			t.Fatalf("alg = %q with a %d-byte signature, want ES256 with 64", h.Alg, len(sig))
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(k, digest[:], r, s) {
			t.Fatal("ES256 signature does not verify")
		}
	default:
		t.Fatalf("unexpected key type %T", pub)
	}
	return h, c
}

func decodeSegment(t *testing.T, seg string, v any) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatalf("decoding JWT segment: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding JWT segment %s: %v", b, err)
	}
}

// jwk is one key of a JWK set, as kube-apiserver serves it.
type jwk struct {
	Kty string `json:"kty"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// publicKey returns the key k describes.
func (k jwk) publicKey(t *testing.T) crypto.PublicKey {
	t.Helper()
	decode := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("JWK %s: %v", k.Kid, err)
		}
		return b
	}
	switch k.Kty {
	case "RSA":
		e := new(big.Int).SetBytes(decode(k.E))
		return &rsa.PublicKey{N: new(big.Int).SetBytes(decode(k.N)), E: int(e.Int64())}
	case "EC":
		if k.Crv != "P-256" {
			t.Fatalf("JWK %s: curve %q", k.Kid, k.Crv)
		}
		// RFC 7518 gives x and y at the curve's full length: together they
		// make the uncompressed point after its 0x04 tag.
		point := append(append([]byte{4}, decode(k.X)...), decode(k.Y)...)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			t.Fatalf("JWK %s: %v", k.Kid, err)
		}
		return pub
	}
	t.Fatalf("JWK %s: kty %q", k.Kid, k.Kty)
	return nil
}

// getJSON GETs path from the control plane as the admin and decodes the
// answer into v.
func getJSON(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, path string, v any) {
	t.Helper()
	b, err := cp.Clientset().Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: decoding %s: %v", path, b, err)
	}
}

// fetchJWKS returns the keys of /openid/v1/jwks by key ID.
func fetchJWKS(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane) map[string]jwk {
	t.Helper()
	var set struct {
		Keys []jwk `json:"keys"`
	}
	getJSON(ctx, t, cp, "/openid/v1/jwks", &set)
	keys := make(map[string]jwk)
	for _, k := range set.Keys {
		keys[k.Kid] = k
	}
	return keys
}

// equalKeys reports whether a and b are the same public key.
func equalKeys(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}
