package jwks_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// TestMarshalSetKubernetes: the key set for Kubernetes' RSA and EC test keys
// is byte-identical to kube-apiserver's, whether the keys come as public
// keys, PEM files, private keys or signers, as the OIDC metadata tests of
// k8s.io/kubernetes/pkg/serviceaccount expect it.
func TestMarshalSetKubernetes(t *testing.T) {
	tests := []struct {
		name string
		keys func(t *testing.T) []crypto.PublicKey
	}{
		{name: "public keys", keys: func(*testing.T) []crypto.PublicKey {
			return []crypto.PublicKey{testkeys.K8sRSA().Public(), testkeys.K8sEC().Public()}
		}},
		{name: "public key files", keys: func(t *testing.T) []crypto.PublicKey {
			return []crypto.PublicKey{pemPublicKey(t, "k8s-rsa.pub.pem"), pemPublicKey(t, "k8s-ec.pub.pem")}
		}},
		{name: "private keys", keys: func(*testing.T) []crypto.PublicKey { return []crypto.PublicKey{testkeys.K8sRSA(), testkeys.K8sEC()} }},
		{name: "private key files", keys: func(t *testing.T) []crypto.PublicKey {
			return []crypto.PublicKey{pemPublicKey(t, "k8s-rsa.key.pem"), pemPublicKey(t, "k8s-ec.key.pem")}
		}},
		{name: "signers", keys: func(*testing.T) []crypto.PublicKey {
			return []crypto.PublicKey{signerOnly{testkeys.K8sRSA()}, signerOnly{testkeys.K8sEC()}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := newKeys(tt.keys(t)...)
			require.NoError(t, err)
			got, err := jwks.MarshalSet(keys)
			require.NoError(t, err)
			assert.Equal(t, k8sJWKS, string(got))
		})
	}
}

// TestMarshalJWKMemberOrder checks each key type's JWK in go-jose's member
// order: use, kty, kid, crv, alg, x, y, n, e.
func TestMarshalJWKMemberOrder(t *testing.T) {
	b64 := base64.RawURLEncoding.EncodeToString
	ed := testkeys.Generated("ed25519").Public().(ed25519.PublicKey)
	p384 := testkeys.Generated("p384").Public().(*ecdsa.PublicKey)
	p384raw, err := p384.Bytes()
	require.NoError(t, err)
	tests := []struct {
		name string
		key  jwks.Key
		want string
	}{
		{name: "RSA", key: mustKey(t, testkeys.K8sRSA()),
			want: `{"use":"sig","kty":"RSA","kid":"` + testkeys.K8sRSAKeyID + `","alg":"RS256","n":"` + k8sRSAN + `","e":"AQAB"}`},
		{name: "RSA PS256", key: jwks.Key{KeyID: "k", Public: testkeys.K8sRSA().Public(), Algorithm: jwks.PS256},
			want: `{"use":"sig","kty":"RSA","kid":"k","alg":"PS256","n":"` + k8sRSAN + `","e":"AQAB"}`},
		{name: "EC", key: mustKey(t, testkeys.K8sEC()),
			want: `{"use":"sig","kty":"EC","kid":"` + testkeys.K8sECKeyID + `","crv":"P-256","alg":"ES256","x":"` + k8sECX + `","y":"` + k8sECY + `"}`},
		{name: "P-384", key: jwks.Key{KeyID: "p", Public: p384, Algorithm: jwks.ES384},
			want: `{"use":"sig","kty":"EC","kid":"p","crv":"P-384","alg":"ES384","x":"` + b64(p384raw[1:49]) + `","y":"` + b64(p384raw[49:]) + `"}`},
		{name: "Ed25519 OKP", key: jwks.Key{KeyID: "ed", Public: ed, Algorithm: jwks.EdDSA},
			want: `{"use":"sig","kty":"OKP","kid":"ed","crv":"Ed25519","alg":"EdDSA","x":"` + b64(ed) + `"}`},
		{name: "Ed25519 with RFC 9864 name", key: jwks.Key{KeyID: "ed", Public: ed, Algorithm: jwks.Ed25519},
			want: `{"use":"sig","kty":"OKP","kid":"ed","crv":"Ed25519","alg":"Ed25519","x":"` + b64(ed) + `"}`},
		{name: "no kid, no alg", key: jwks.Key{Public: ed},
			want: `{"use":"sig","kty":"OKP","crv":"Ed25519","x":"` + b64(ed) + `"}`},
		{name: "kid escaped as go-jose escapes", key: jwks.Key{KeyID: "a\"b\\c<d>&e\u2028\n\x01é", Public: ed},
			want: `{"use":"sig","kty":"OKP","kid":"a\"b\\c\u003cd\u003e\u0026e\u2028\n\u0001é","crv":"Ed25519","x":"` + b64(ed) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.MarshalJWK(tt.key)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))

			prefix := []byte("prefix,")
			appended, err := jwks.AppendJWK(prefix, tt.key)
			require.NoError(t, err)
			assert.Equal(t, "prefix,"+tt.want, string(appended))
		})
	}
}

func mustKey(t testing.TB, key any) jwks.Key {
	t.Helper()
	k, err := jwks.NewKey(key)
	require.NoError(t, err)
	return k
}

// ecKeyWithShortX generates keys on curve until one has an x coordinate
// with a leading zero byte, so that a minimal encoding would be shorter.
func ecKeyWithShortX(t *testing.T, curve elliptic.Curve) *ecdsa.PublicKey {
	t.Helper()
	for range 100000 {
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		require.NoError(t, err)
		raw, err := k.PublicKey.Bytes()
		require.NoError(t, err)
		if raw[1] == 0 {
			return &k.PublicKey
		}
	}
	t.Fatal("no key with a leading zero byte")
	return nil
}

// TestMarshalJWKFixedWidth: EC coordinates are written at the curve's full
// width (32, 48, 66 bytes), leading zeros kept, as go-jose writes them.
func TestMarshalJWKFixedWidth(t *testing.T) {
	tests := []struct {
		name  string
		curve elliptic.Curve
		size  int
	}{
		{name: "P-256", curve: elliptic.P256(), size: 32},
		{name: "P-384", curve: elliptic.P384(), size: 48},
		{name: "P-521", curve: elliptic.P521(), size: 66},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := ecKeyWithShortX(t, tt.curve)
			b, err := jwks.MarshalJWK(mustKey(t, pub))
			require.NoError(t, err)
			var m map[string]string
			require.NoError(t, json.Unmarshal(b, &m))
			for _, c := range []string{"x", "y"} {
				raw, err := base64.RawURLEncoding.DecodeString(m[c])
				require.NoError(t, err)
				assert.Len(t, raw, tt.size, c)
			}
			x, _ := base64.RawURLEncoding.DecodeString(m["x"])
			assert.Equal(t, byte(0), x[0])
			back := parseOne(t, string(b))
			assert.True(t, pub.Equal(back.Public))
		})
	}
}

// TestMarshalSetRoundTrip: ParseSet reads back every key MarshalSet writes,
// with its ID and algorithm.
func TestMarshalSetRoundTrip(t *testing.T) {
	var keys []jwks.Key
	for _, name := range []string{"rsa2048", "rsa3072", "p256", "p384", "p521", "ed25519"} {
		keys = append(keys, mustKey(t, testkeys.Generated(name)))
	}
	keys = append(keys, jwks.Key{KeyID: "ps", Public: testkeys.K8sRSA().Public(), Algorithm: jwks.PS512})
	doc, err := jwks.MarshalSet(keys)
	require.NoError(t, err)
	require.NoError(t, jwks.Audit(doc))
	s, err := jwks.ParseSet(doc, jwks.ParseOptions{})
	require.NoError(t, err)
	require.Empty(t, s.Skipped)
	require.Len(t, s.Keys, len(keys))
	for i, k := range keys {
		assert.Equal(t, k.KeyID, s.Keys[i].KeyID)
		assert.Equal(t, k.Algorithm, s.Keys[i].Algorithm)
		assert.True(t, k.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(s.Keys[i].Public), k.KeyID)
	}
}

func TestMarshalSetExcludeAndDuplicates(t *testing.T) {
	rsaKey := mustKey(t, testkeys.K8sRSA())
	ecKey := mustKey(t, testkeys.K8sEC())
	hidden := rsaKey
	hidden.ExcludeFromDiscovery = true
	rsaJSON, err := jwks.MarshalJWK(rsaKey)
	require.NoError(t, err)
	ecJSON, err := jwks.MarshalJWK(ecKey)
	require.NoError(t, err)

	tests := []struct {
		name string
		keys []jwks.Key
		want string
	}{
		{name: "nil", keys: nil, want: `{"keys":[]}`},
		{name: "excluded key left out", keys: []jwks.Key{hidden, ecKey}, want: set(string(ecJSON))},
		{name: "excluded last", keys: []jwks.Key{ecKey, hidden}, want: set(string(ecJSON))},
		{name: "all excluded", keys: []jwks.Key{hidden}, want: `{"keys":[]}`},
		{name: "duplicates kept", keys: []jwks.Key{rsaKey, ecKey, rsaKey}, want: set(string(rsaJSON), string(ecJSON), string(rsaJSON))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.MarshalSet(tt.keys)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestMarshalSetChecksExcludedKeys: a key left out of the set is still
// checked; a broken one is an error, not silently hidden.
func TestMarshalSetChecksExcludedKeys(t *testing.T) {
	ecKey, err := jwks.NewKey(testkeys.K8sEC())
	require.NoError(t, err)
	_, err = jwks.MarshalSet([]jwks.Key{{Public: testkeys.K8sRSA(), ExcludeFromDiscovery: true}, ecKey})
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
}

func TestMarshalErrors(t *testing.T) {
	rsaPub := testkeys.K8sRSA().Public()
	tests := []struct {
		name string
		key  jwks.Key
	}{
		{name: "RSA private key in Public", key: jwks.Key{KeyID: "x", Public: testkeys.K8sRSA()}},
		{name: "EC private key in Public", key: jwks.Key{KeyID: "x", Public: testkeys.K8sEC()}},
		{name: "Ed25519 private key in Public", key: jwks.Key{KeyID: "x", Public: testkeys.Generated("ed25519")}},
		{name: "signer in Public", key: jwks.Key{KeyID: "x", Public: signerOnly{testkeys.K8sRSA()}}},
		{name: "nil key", key: jwks.Key{KeyID: "x"}},
		{name: "zero Key", key: jwks.Key{}},
		{name: "P-224", key: jwks.Key{KeyID: "x", Public: testkeys.Generated("p224").Public()}},
		{name: "RSA 1024", key: jwks.Key{KeyID: "x", Public: testkeys.Generated("rsa1024").Public()}},
		{name: "ES256 on RSA", key: jwks.Key{KeyID: "x", Public: rsaPub, Algorithm: jwks.ES256}},
		{name: "ES384 on P-256", key: jwks.Key{KeyID: "x", Public: testkeys.K8sEC().Public(), Algorithm: jwks.ES384}},
		{name: "HS256 on RSA", key: jwks.Key{KeyID: "x", Public: rsaPub, Algorithm: "HS256"}},
		{name: "none", key: jwks.Key{KeyID: "x", Public: rsaPub, Algorithm: "none"}},
		{name: "RS256 on Ed25519", key: jwks.Key{KeyID: "x", Public: testkeys.Generated("ed25519").Public(), Algorithm: jwks.RS256}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := jwks.MarshalJWK(tt.key)
			requireUnsupported(t, err, "")
			assert.Empty(t, b)

			dst := []byte("unchanged")
			out, err := jwks.AppendJWK(dst, tt.key)
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
			assert.Equal(t, "unchanged", string(out))

			doc, err := jwks.MarshalSet([]jwks.Key{mustKey(t, testkeys.K8sEC()), tt.key})
			requireUnsupported(t, err, "")
			assert.Nil(t, doc)
		})
	}
}

// TestMarshalJWKKidMatchesEncodingJSON: for valid UTF-8, the kid is escaped
// as encoding/json escapes it (go-jose v2's encoder is a fork of it).
func TestMarshalJWKKidMatchesEncodingJSON(t *testing.T) {
	ed := testkeys.Generated("ed25519").Public()
	for _, kid := range []string{"plain", `q"uote`, `back\slash`, "<script>&", "tab\tnl\ncr\r", "\x00\x1f\x7f", "\u2028\u2029", "émoji 🔑", "/slash/"} {
		b, err := jwks.MarshalJWK(jwks.Key{KeyID: kid, Public: ed})
		require.NoError(t, err)
		want, err := json.Marshal(kid)
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(b), `"kid":`+string(want)+`,`), "%q in %s", kid, b)
	}
}
