package jwks_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// wantKey is what a parse test checks of a key ParseSet returns.
type wantKey struct {
	ID        string
	Algorithm string
	// Public, if set, must equal the key's public key.
	Public crypto.PublicKey
	// Type is the Go type of Public otherwise, e.g. "*rsa.PublicKey".
	Type string
}

func (w wantKey) check(t *testing.T, got jwks.Key) {
	t.Helper()
	assert.Equal(t, w.ID, got.KeyID)
	assert.Equal(t, w.Algorithm, got.Algorithm)
	assert.False(t, got.ExcludeFromDiscovery)
	require.NoError(t, jwks.CheckPublicKey(got.Public))
	assert.True(t, jwks.Fits(got.Algorithm, got.Public))
	if w.Public != nil {
		assert.True(t, w.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(got.Public), "public key differs")
	}
	if w.Type != "" {
		assert.Equal(t, w.Type, fmt.Sprintf("%T", got.Public))
	}
}

type parseCase struct {
	name        string
	doc         string
	opts        jwks.ParseOptions
	wantErr     error
	wantKeys    []wantKey
	wantSkipped []problem
}

func (tt parseCase) run(t *testing.T) {
	t.Helper()
	s, err := jwks.ParseSet([]byte(tt.doc), tt.opts)
	if tt.wantErr != nil {
		requireSetError(t, err, tt.wantErr)
		assert.Nil(t, s)
		return
	}
	require.NoError(t, err)
	require.Len(t, s.Keys, len(tt.wantKeys))
	for i, w := range tt.wantKeys {
		w.check(t, s.Keys[i])
	}
	var skipped []problem
	for _, me := range s.Skipped {
		require.ErrorIs(t, me, me.Kind)
		assert.NotEmpty(t, me.Reason)
		skipped = append(skipped, problem{Index: me.Index, Member: me.Member, Kind: me.Kind})
	}
	assert.Equal(t, tt.wantSkipped, skipped)
}

// Shortcuts for key objects with members changed.
func rsaWith(n, e string) string {
	return `{"kty":"RSA","n":"` + n + `","e":"` + e + `"}`
}

func ecWith(crv, x, y string) string {
	return `{"kty":"EC","crv":"` + crv + `","x":"` + x + `","y":"` + y + `"}`
}

func okpWith(crv, x string) string {
	return `{"kty":"OKP","crv":"` + crv + `","x":"` + x + `"}`
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestParseSet(t *testing.T) {
	k8sRSA := testkeys.K8sRSA().Public()
	k8sEC := testkeys.K8sEC().Public()
	rsaKey := wantKey{Algorithm: jwks.RS256, Public: k8sRSA}
	ecKey := wantKey{Algorithm: jwks.ES256, Public: k8sEC}
	okpKey := wantKey{Algorithm: jwks.EdDSA, Public: ed25519.PublicKey(mustB64(t, rfc8037X))}
	named := func(w wantKey, id string) wantKey { w.ID = id; return w }
	alg := func(w wantKey, alg string) wantKey { w.Algorithm = alg; return w }

	rsaN := k8sRSA.(*rsa.PublicKey).N
	ecRaw, err := k8sEC.(*ecdsa.PublicKey).Bytes()
	require.NoError(t, err)
	offCurveY := append([]byte(nil), ecRaw[33:]...)
	offCurveY[31] ^= 1
	p384Raw, err := testkeys.Generated("p384").Public().(*ecdsa.PublicKey).Bytes()
	require.NoError(t, err)
	p521Raw, err := testkeys.Generated("p521").Public().(*ecdsa.PublicKey).Bytes()
	require.NoError(t, err)
	rsa1024N := testkeys.Generated("rsa1024").Public().(*rsa.PublicKey).N
	stdN := strings.NewReplacer("-", "+", "_", "/").Replace(k8sRSAN)
	require.NotEqual(t, k8sRSAN, stdN)

	tests := []parseCase{
		// Good keys.
		{name: "Kubernetes' key set", doc: k8sJWKS, wantKeys: []wantKey{named(rsaKey, testkeys.K8sRSAKeyID), named(ecKey, testkeys.K8sECKeyID)}},
		{name: "RSA without alg gets RS256", doc: set(rsaJWK), wantKeys: []wantKey{rsaKey}},
		{name: "EC P-256 without alg gets ES256", doc: set(ecJWK), wantKeys: []wantKey{ecKey}},
		{name: "EC P-384 without alg gets ES384", doc: set(ecWith("P-384", b64(p384Raw[1:49]), b64(p384Raw[49:]))),
			wantKeys: []wantKey{{Algorithm: jwks.ES384, Public: testkeys.Generated("p384").Public()}}},
		{name: "EC P-521 without alg gets ES512", doc: set(ecWith("P-521", b64(p521Raw[1:67]), b64(p521Raw[67:]))),
			wantKeys: []wantKey{{Algorithm: jwks.ES512, Public: testkeys.Generated("p521").Public()}}},
		{name: "OKP without alg gets EdDSA", doc: set(okpJWK), wantKeys: []wantKey{okpKey}},
		{name: "OKP with alg Ed25519", doc: set(with(okpJWK, `"alg":"Ed25519"`)), wantKeys: []wantKey{alg(okpKey, jwks.Ed25519)}},
		{name: "RSA with alg PS384", doc: set(with(rsaJWK, `"alg":"PS384"`)), wantKeys: []wantKey{alg(rsaKey, jwks.PS384)}},
		{name: "RSA with alg RS512", doc: set(with(rsaJWK, `"alg":"RS512"`)), wantKeys: []wantKey{alg(rsaKey, jwks.RS512)}},
		{name: "empty alg is no alg", doc: set(with(rsaJWK, `"alg":""`)), wantKeys: []wantKey{rsaKey}},
		{name: "use sig", doc: set(with(ecJWK, `"use":"sig"`)), wantKeys: []wantKey{ecKey}},
		{name: "key_ops verify", doc: set(with(ecJWK, `"key_ops":["verify"]`)), wantKeys: []wantKey{ecKey}},
		{name: "key_ops sign and verify", doc: set(with(ecJWK, `"key_ops":["sign","verify"]`)), wantKeys: []wantKey{ecKey}},
		{name: "kid with escapes", doc: set(with(ecJWK, `"kid":"a\"b\u00e9\ud83d\udd11"`)), wantKeys: []wantKey{named(ecKey, "a\"bé🔑")}},
		{name: "unknown members ignored", doc: set(with(rsaJWK, `"x5c":["MIIB"]`, `"x5t":"abc"`, `"ext":true`)), wantKeys: []wantKey{rsaKey}},
		{name: "RSA e=3", doc: set(rsaWith(k8sRSAN, "Aw")), wantKeys: []wantKey{{Algorithm: jwks.RS256, Public: &rsa.PublicKey{N: rsaN, E: 3}}}},
		{name: "RSA e=65537, the largest", doc: set(rsaWith(k8sRSAN, "AQAB")), wantKeys: []wantKey{{Algorithm: jwks.RS256, Public: &rsa.PublicKey{N: rsaN, E: jwks.MaxRSAExponent}}}},
		{name: "RSA e=3, the smallest", doc: set(rsaWith(k8sRSAN, "Aw")), wantKeys: []wantKey{{Algorithm: jwks.RS256, Public: &rsa.PublicKey{N: rsaN, E: 3}}}},
		{name: "RSA e with a leading zero byte", doc: set(rsaWith(k8sRSAN, "AAEAAQ")), wantKeys: []wantKey{rsaKey}},
		{name: "RSA n with a leading zero byte", doc: set(rsaWith(b64(append([]byte{0}, rsaN.Bytes()...)), "AQAB")), wantKeys: []wantKey{rsaKey}},
		{name: "RSA modulus of MaxRSABits", doc: set(rsaWith(b64(oddModulus(jwks.MaxRSABits).Bytes()), "AQAB")), wantKeys: []wantKey{{Algorithm: jwks.RS256, Type: "*rsa.PublicKey"}}},
		{name: "empty set", doc: `{"keys":[]}`},
		{name: "other top-level members", doc: `{"x":{"keys":1},"keys":[` + okpJWK + `],"y":[]}`, wantKeys: []wantKey{okpKey}},
		{name: "bad keys do not fail good ones", doc: set(rsaJWK, `{"kty":"oct","k":"AQ"}`, ecJWK),
			wantKeys: []wantKey{rsaKey, ecKey}, wantSkipped: []problem{private(1, "k")}},

		// Skipped: not a usable key object.
		{name: "not an object", doc: `{"keys":[1,"k",null,[],true]}`,
			wantSkipped: []problem{unsupported(0, ""), unsupported(1, ""), unsupported(2, ""), unsupported(3, ""), unsupported(4, "")}},
		{name: "duplicate member", doc: set(with(rsaJWK, `"n":"`+k8sRSAN+`"`)), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "case variant of a member", doc: set(with(rsaJWK, `"Kid":"x"`)), wantSkipped: []problem{unsupported(0, "Kid")}},
		{name: "private d", doc: set(with(ecJWK, `"d":"AQ"`)), wantSkipped: []problem{private(0, "d")}},
		{name: "private D", doc: set(with(ecJWK, `"D":"AQ"`)), wantSkipped: []problem{private(0, "D")}},
		{name: "private oth", doc: set(with(rsaJWK, `"oth":[]`)), wantSkipped: []problem{private(0, "oth")}},
		{name: "private d nested in a member", doc: set(with(ecJWK, `"meta":[{"d":"AQ"}]`)), wantSkipped: []problem{private(0, "meta")}},
		{name: "private D in an array where a key should be", doc: `{"keys":[[{"D":""}]]}`, wantSkipped: []problem{private(0, "")}},
		{name: "private d nested in a member with an empty name", doc: set(with(ecJWK, `"":[{"":{"K":""}}]`)), wantSkipped: []problem{private(0, "")}},
		{name: "kty oct", doc: set(`{"kty":"oct","alg":"HS256"}`), wantSkipped: []problem{unknownKty(0)}},
		{name: "missing kty", doc: set(`{"n":"` + k8sRSAN + `","e":"AQAB"}`), wantSkipped: []problem{unknownKty(0)}},
		{name: "kty not a string", doc: set(`{"kty":["RSA"]}`), wantSkipped: []problem{unsupported(0, "kty")}},
		{name: "kid not a string", doc: set(with(ecJWK, `"kid":1`)), wantSkipped: []problem{unsupported(0, "kid")}},

		// Skipped: use, key_ops, alg.
		{name: "use enc", doc: set(with(ecJWK, `"use":"enc"`)), wantSkipped: []problem{unsupported(0, "use")}},
		{name: "use SIG", doc: set(with(ecJWK, `"use":"SIG"`)), wantSkipped: []problem{unsupported(0, "use")}},
		{name: "use not a string", doc: set(with(ecJWK, `"use":["sig"]`)), wantSkipped: []problem{unsupported(0, "use")}},
		{name: "key_ops sign", doc: set(with(ecJWK, `"key_ops":["sign"]`)), wantSkipped: []problem{unsupported(0, "key_ops")}},
		{name: "key_ops empty", doc: set(with(ecJWK, `"key_ops":[]`)), wantSkipped: []problem{unsupported(0, "key_ops")}},
		{name: "key_ops a string", doc: set(with(ecJWK, `"key_ops":"verify"`)), wantSkipped: []problem{unsupported(0, "key_ops")}},
		{name: "key_ops holding a number", doc: set(with(ecJWK, `"key_ops":["verify",1]`)), wantSkipped: []problem{unsupported(0, "key_ops")}},
		{name: "alg ES384 on P-256", doc: set(with(ecJWK, `"alg":"ES384"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg RS256 on EC", doc: set(with(ecJWK, `"alg":"RS256"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg HS256 on RSA", doc: set(with(rsaJWK, `"alg":"HS256"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg none", doc: set(with(rsaJWK, `"alg":"none"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg ES256 on OKP", doc: set(with(okpJWK, `"alg":"ES256"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg rs256", doc: set(with(rsaJWK, `"alg":"rs256"`)), wantSkipped: []problem{unsupported(0, "alg")}},
		{name: "alg not a string", doc: set(with(rsaJWK, `"alg":null`)), wantSkipped: []problem{unsupported(0, "alg")}},

		// Skipped: RSA members.
		{name: "n missing", doc: set(`{"kty":"RSA","e":"AQAB"}`), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n empty", doc: set(rsaWith("", "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n padded", doc: set(rsaWith(k8sRSAN+"==", "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n in the standard alphabet", doc: set(rsaWith(stdN, "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n with an escaped newline", doc: set(rsaWith(k8sRSAN[:64]+`\n`+k8sRSAN[64:], "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n with an escaped carriage return", doc: set(rsaWith(k8sRSAN[:64]+`\r`+k8sRSAN[64:], "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n with a space", doc: set(rsaWith(k8sRSAN[:64]+` `+k8sRSAN[64:], "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "n not a string", doc: set(`{"kty":"RSA","n":12345,"e":"AQAB"}`), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "RSA 1024", doc: set(rsaWith(b64(rsa1024N.Bytes()), "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "RSA even modulus", doc: set(rsaWith(b64(new(big.Int).Add(rsaN, big.NewInt(1)).Bytes()), "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "RSA modulus of MaxRSABits+1", doc: set(rsaWith(b64(oddModulus(jwks.MaxRSABits+1).Bytes()), "AQAB")), wantSkipped: []problem{unsupported(0, "n")}},
		{name: "e missing", doc: set(`{"kty":"RSA","n":"` + k8sRSAN + `"}`), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e empty", doc: set(rsaWith(k8sRSAN, "")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=1", doc: set(rsaWith(k8sRSAN, "AQ")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=0", doc: set(rsaWith(k8sRSAN, "AA")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e even", doc: set(rsaWith(k8sRSAN, "AQAA")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=2^31+1", doc: set(rsaWith(k8sRSAN, "gAAAAQ")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=2^31-1", doc: set(rsaWith(k8sRSAN, "f____w")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=65539, just above the bound", doc: set(rsaWith(k8sRSAN, "AQAD")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e=2^32-1", doc: set(rsaWith(k8sRSAN, "_____w")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e of 5 bytes", doc: set(rsaWith(k8sRSAN, "AQAAAAE")), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e huge", doc: set(rsaWith(k8sRSAN, strings.Repeat("_", 400))), wantSkipped: []problem{unsupported(0, "e")}},
		{name: "e padded", doc: set(rsaWith(k8sRSAN, "AQAB=")), wantSkipped: []problem{unsupported(0, "e")}},

		// Skipped: EC and OKP members.
		{name: "crv P-224", doc: set(ecWith("P-224", k8sECX, k8sECY)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "crv secp256k1", doc: set(ecWith("secp256k1", k8sECX, k8sECY)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "crv p-256", doc: set(ecWith("p-256", k8sECX, k8sECY)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "crv missing", doc: set(`{"kty":"EC","x":"` + k8sECX + `","y":"` + k8sECY + `"}`), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "crv Ed25519 on EC", doc: set(ecWith("Ed25519", k8sECX, k8sECY)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "x padded", doc: set(ecWith("P-256", k8sECX+"=", k8sECY)), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "x with non-zero trailing bits", doc: set(ecWith("P-256", k8sECX[:42]+"J", k8sECY)), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "x short", doc: set(ecWith("P-256", b64(ecRaw[2:33]), k8sECY)), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "x with an extra zero byte", doc: set(ecWith("P-256", b64(append([]byte{0}, ecRaw[1:33]...)), k8sECY)), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "y missing", doc: set(`{"kty":"EC","crv":"P-256","x":"` + k8sECX + `"}`), wantSkipped: []problem{unsupported(0, "y")}},
		{name: "y in the standard alphabet", doc: set(ecWith("P-256", k8sECX, "BlHnikLV9PyEd6gl8k4T/3Wwoh6xd79XLoQTh2PAi1Y")), wantSkipped: []problem{unsupported(0, "y")}},
		{name: "point off the curve", doc: set(ecWith("P-256", k8sECX, b64(offCurveY))), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "point of zeros", doc: set(ecWith("P-256", b64(make([]byte, 32)), b64(make([]byte, 32)))), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "P-384 with P-256 coordinates", doc: set(ecWith("P-384", k8sECX, k8sECY)), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "OKP X25519", doc: set(okpWith("X25519", rfc8037X)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "OKP Ed448", doc: set(okpWith("Ed448", rfc8037X)), wantSkipped: []problem{unsupported(0, "crv")}},
		{name: "OKP x short", doc: set(okpWith("Ed25519", rfc8037X[:42])), wantSkipped: []problem{unsupported(0, "x")}},
		{name: "OKP x missing", doc: set(`{"kty":"OKP","crv":"Ed25519"}`), wantSkipped: []problem{unsupported(0, "x")}},

		// The whole set refused.
		{name: "not JSON", doc: `{"keys":[`, wantErr: jwks.ErrMalformedSet},
		{name: "array", doc: `[]`, wantErr: jwks.ErrMalformedSet},
		{name: "no keys", doc: `{}`, wantErr: jwks.ErrMalformedSet},
		{name: "keys not an array", doc: `{"keys":"` + ecJWK + `"}`, wantErr: jwks.ErrMalformedSet},
		{name: "keys twice", doc: `{"keys":[],"keys":[` + ecJWK + `]}`, wantErr: jwks.ErrMalformedSet},
		{name: "Keys", doc: `{"Keys":[` + ecJWK + `]}`, wantErr: jwks.ErrMalformedSet},
		{name: "trailing data", doc: set(ecJWK) + `x`, wantErr: jwks.ErrMalformedSet},
		{name: "invalid JSON inside a key", doc: `{"keys":[{"kty":"EC",}]}`, wantErr: jwks.ErrMalformedSet},
		{name: "invalid JSON inside an unknown member", doc: `{"keys":[{"kty":"EC","x5c":[01]}]}`, wantErr: jwks.ErrMalformedSet},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestParseSetSkippedDetails: a skipped key's error carries its kid and,
// for a key refused by CheckPublicKey, the cause.
func TestParseSetSkippedDetails(t *testing.T) {
	rsa1024N := testkeys.Generated("rsa1024").Public().(*rsa.PublicKey).N
	doc := set(with(rsaWith(b64(rsa1024N.Bytes()), "AQAB"), `"kid":"small"`))
	s, err := jwks.ParseSet([]byte(doc), jwks.ParseOptions{})
	require.NoError(t, err)
	require.Len(t, s.Skipped, 1)
	me := s.Skipped[0]
	assert.Equal(t, "small", me.KeyID)
	assert.Equal(t, "n", me.Member)
	requireUnsupported(t, me, "*rsa.PublicKey")
}

// repeatKeys returns a key set of n copies of obj.
func repeatKeys(n int, obj string) string {
	objs := make([]string, n)
	for i := range objs {
		objs[i] = obj
	}
	return set(objs...)
}

func TestParseSetLimits(t *testing.T) {
	// The documented defaults.
	assert.Equal(t, 256*1024, jwks.DefaultMaxSetBytes)
	assert.Equal(t, 100, jwks.DefaultMaxKeys)

	three := repeatKeys(3, ecJWK)
	pad := func(doc string, size int) string { return doc + strings.Repeat(" ", size-len(doc)) }
	ecKeys := func(n int) []wantKey {
		out := make([]wantKey, n)
		for i := range out {
			out[i] = wantKey{Algorithm: jwks.ES256, Public: testkeys.K8sEC().Public()}
		}
		return out
	}
	tests := []parseCase{
		{name: "exactly MaxKeys", doc: three, opts: jwks.ParseOptions{MaxKeys: 3}, wantKeys: ecKeys(3)},
		{name: "MaxKeys+1", doc: repeatKeys(4, ecJWK), opts: jwks.ParseOptions{MaxKeys: 3}, wantErr: jwks.ErrSetTooLarge},
		{name: "MaxKeys counts skipped keys", doc: `{"keys":[1,2,3]}`, opts: jwks.ParseOptions{MaxKeys: 2}, wantErr: jwks.ErrSetTooLarge},
		{name: "DefaultMaxKeys", doc: repeatKeys(jwks.DefaultMaxKeys, ecJWK), wantKeys: ecKeys(jwks.DefaultMaxKeys)},
		{name: "DefaultMaxKeys+1", doc: repeatKeys(jwks.DefaultMaxKeys+1, ecJWK), wantErr: jwks.ErrSetTooLarge},
		{name: "DefaultMaxKeys+1 skipped keys", doc: `{"keys":[` + strings.Repeat("0,", jwks.DefaultMaxKeys) + `0]}`, wantErr: jwks.ErrSetTooLarge},
		{name: "MaxKeys above the default", doc: repeatKeys(jwks.DefaultMaxKeys+1, ecJWK), opts: jwks.ParseOptions{MaxKeys: jwks.DefaultMaxKeys + 1}, wantKeys: ecKeys(jwks.DefaultMaxKeys + 1)},
		{name: "exactly MaxBytes", doc: three, opts: jwks.ParseOptions{MaxBytes: len(three)}, wantKeys: ecKeys(3)},
		{name: "MaxBytes-1", doc: three, opts: jwks.ParseOptions{MaxBytes: len(three) - 1}, wantErr: jwks.ErrSetTooLarge},
		{name: "exactly DefaultMaxSetBytes", doc: pad(three, jwks.DefaultMaxSetBytes), wantKeys: ecKeys(3)},
		{name: "DefaultMaxSetBytes+1", doc: pad(three, jwks.DefaultMaxSetBytes+1), wantErr: jwks.ErrSetTooLarge},
		{name: "DefaultMaxSetBytes+1 of garbage", doc: strings.Repeat("x", jwks.DefaultMaxSetBytes+1), wantErr: jwks.ErrSetTooLarge},
		{name: "MaxBytes above the default", doc: pad(three, jwks.DefaultMaxSetBytes+1), opts: jwks.ParseOptions{MaxBytes: jwks.DefaultMaxSetBytes + 1}, wantKeys: ecKeys(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestParseSetInterop reads key sets other implementations wrote.
func TestParseSetInterop(t *testing.T) {
	rfc7638Key := &rsa.PublicKey{N: new(big.Int).SetBytes(mustB64(t, rfc7638N)), E: 65537}
	tests := []parseCase{
		// RFC 7517 A.1: the P-256 key is for encryption.
		{name: "RFC 7517 A.1", doc: rfc7517A1,
			wantKeys:    []wantKey{{ID: "2011-04-29", Algorithm: jwks.RS256, Public: rfc7638Key}},
			wantSkipped: []problem{unsupported(0, "use")}},
		{name: "RFC 7517 A.2 private key", doc: rfc7517A2EC, wantSkipped: []problem{private(0, "d")}},
		{name: "RFC 7520 signature keys", doc: set(rfc7520EC, rfc7520RSA), wantKeys: []wantKey{
			{ID: "bilbo.baggins@hobbiton.example", Algorithm: jwks.ES512, Type: "*ecdsa.PublicKey"},
			{ID: "bilbo.baggins@hobbiton.example", Algorithm: jwks.RS256, Type: "*rsa.PublicKey"},
		}},
		{name: "jwx v3 public set", doc: string(jwxFile(t, "public.json")), wantKeys: []wantKey{
			{ID: "W3pXl1oSuh5NAA3qTlgspiAAHDcZR6ne8-8d9RxN12g", Algorithm: jwks.RS256, Type: "*rsa.PublicKey"},
			{ID: "OlMXiW7dxba3SN_Hgi7kATd8k8WT1-lreENc6IyhfUo", Algorithm: jwks.ES384, Type: "*ecdsa.PublicKey"},
			{ID: "eXEupLenUTmck_oIF10yHjOtEU1gw9ivyhlj8ehmSGg", Algorithm: jwks.EdDSA, Type: "ed25519.PublicKey"},
		}},
		{name: "jwx v3 private set", doc: string(jwxFile(t, "private.json")),
			wantSkipped: []problem{private(0, "d"), private(1, "d"), private(2, "d")}},
		{name: "jwx v3 PublicSetOf keeping an oct key", doc: string(jwxFile(t, "publicsetof-allow-symmetric.json")),
			wantKeys: []wantKey{
				{Algorithm: jwks.RS256, Type: "*rsa.PublicKey"},
				{Algorithm: jwks.ES384, Type: "*ecdsa.PublicKey"},
				{Algorithm: jwks.EdDSA, Type: "ed25519.PublicKey"},
			},
			wantSkipped: []problem{private(3, "k")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestParseSetJWXPublicMatchesPrivate: the public keys jwx wrote are the
// public halves of the private keys it wrote.
func TestParseSetJWXPublicMatchesPrivate(t *testing.T) {
	pub := parseSetKeys(t, string(jwxFile(t, "public.json")))
	stripped := parseSetKeys(t, string(jwxFile(t, "publicsetof-allow-symmetric.json")))
	require.Len(t, pub, 3)
	require.Len(t, stripped, 3)
	for i := range pub {
		assert.True(t, pub[i].Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(stripped[i].Public))
	}
}

// FuzzParseSet: ParseSet never panics; every key it returns is a checked
// public key fitting its algorithm, taken from a key object Audit does not
// flag, and survives MarshalSet and ParseSet again unchanged.
func FuzzParseSet(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := jwks.ParseSet(doc, jwks.ParseOptions{})
		auditErr := jwks.Audit(doc)
		if err != nil {
			kind := jwks.ErrSetTooLarge
			if errors.Is(err, jwks.ErrMalformedSet) {
				kind = jwks.ErrMalformedSet
			}
			requireSetError(t, err, kind)
			require.Nil(t, s)
			if kind == jwks.ErrMalformedSet {
				require.ErrorIs(t, auditErr, jwks.ErrMalformedSet, "Audit accepts a set ParseSet finds malformed")
			}
			return
		}
		require.NotErrorIs(t, auditErr, jwks.ErrMalformedSet, "Audit finds malformed a set ParseSet accepts")

		// Positions: the skipped keys say theirs; the others are the
		// returned keys, in order.
		total := len(s.Keys) + len(s.Skipped)
		skipped := map[int]bool{}
		for _, me := range s.Skipped {
			requireKind(t, me)
			require.Less(t, me.Index, total)
			require.False(t, skipped[me.Index], "key #%d skipped twice", me.Index)
			skipped[me.Index] = true
		}
		for _, k := range s.Keys {
			require.NoError(t, jwks.CheckPublicKey(k.Public))
			require.True(t, jwks.Fits(k.Algorithm, k.Public), "alg %q on %T", k.Algorithm, k.Public)
			require.False(t, k.ExcludeFromDiscovery)
		}

		// Whatever Audit flags, ParseSet skipped.
		if auditErr != nil {
			for _, me := range memberErrors(t, auditErr) {
				requireKind(t, me)
				if me.Index >= 0 {
					require.True(t, skipped[me.Index], "ParseSet returned key #%d, which Audit flags: %v", me.Index, me)
				}
			}
		}
		if idx, ok := privateIndexesJSON(doc); ok {
			for i := range idx {
				require.True(t, skipped[i], "ParseSet returned key #%d, which holds a private member", i)
				require.ErrorIs(t, auditErr, jwks.ErrPrivateMaterial)
			}
		}

		// Round trip.
		out, err := jwks.MarshalSet(s.Keys)
		require.NoError(t, err)
		require.NoError(t, jwks.Audit(out))
		back, err := jwks.ParseSet(out, jwks.ParseOptions{MaxBytes: 1 << 30})
		require.NoError(t, err)
		require.Empty(t, back.Skipped)
		require.Len(t, back.Keys, len(s.Keys))
		for i, k := range s.Keys {
			require.Equal(t, k.KeyID, back.Keys[i].KeyID)
			require.Equal(t, k.Algorithm, back.Keys[i].Algorithm)
			require.True(t, k.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(back.Keys[i].Public))
		}
	})
}
