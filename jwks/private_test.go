package jwks_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// This file proves that no path from a key to a published document carries
// private key material: whatever form a key is given in, the output either
// is an error or passes Audit, holds no private member, and holds none of
// the key's secret bytes in any common encoding.

// secrets returns the secret values of a private key: the RSA private
// exponent, primes and CRT values, the ECDSA scalar, the Ed25519 seed and
// expanded private key.
func secrets(t testing.TB, key crypto.Signer) [][]byte {
	t.Helper()
	switch k := key.(type) {
	case *rsa.PrivateKey:
		out := [][]byte{k.D.Bytes(), k.Primes[0].Bytes(), k.Primes[1].Bytes()}
		if k.Precomputed.Dp != nil {
			out = append(out, k.Precomputed.Dp.Bytes(), k.Precomputed.Dq.Bytes(), k.Precomputed.Qinv.Bytes())
		}
		return out
	case *ecdsa.PrivateKey:
		d, err := k.Bytes()
		require.NoError(t, err)
		return [][]byte{d}
	case ed25519.PrivateKey:
		return [][]byte{k.Seed(), k[:32]}
	}
	t.Fatalf("unexpected key type %T", key)
	return nil
}

// encodings returns text forms of secret that would appear in a document
// holding it anywhere: base64 (both alphabets) from each of the three byte
// alignments, without the last characters, which depend on what follows,
// and hex.
func encodings(secret []byte) []string {
	var out []string
	for shift := 0; shift < 3 && shift < len(secret); shift++ {
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
			s := enc.EncodeToString(secret[shift:])
			if len(s) > 4 {
				s = s[:len(s)-3]
			}
			out = append(out, s)
		}
	}
	return append(out, hex.EncodeToString(secret), strings.ToUpper(hex.EncodeToString(secret)))
}

// assertPublicOnly checks one output document against one private key.
func assertPublicOnly(t *testing.T, doc []byte, err error, priv crypto.Signer) {
	t.Helper()
	if err != nil {
		require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
		assert.Empty(t, doc)
		return
	}
	require.NoError(t, jwks.Audit(doc))
	assertNoPrivateMembers(t, doc)
	for _, s := range secrets(t, priv) {
		require.GreaterOrEqual(t, len(s), 16, "secret too short to test")
		for _, e := range encodings(s) {
			require.NotContains(t, string(doc), e, "secret value in output")
		}
	}
}

// assertNoPrivateMembers parses doc (a key set or one JWK) with
// encoding/json and checks every member name of every key.
func assertNoPrivateMembers(t testing.TB, doc []byte) {
	t.Helper()
	var top map[string]any
	require.NoError(t, json.Unmarshal(doc, &top))
	keys := []any{top}
	if ks, ok := top["keys"]; ok {
		keys, ok = ks.([]any)
		require.True(t, ok, "keys is not an array")
	}
	for _, k := range keys {
		obj, ok := k.(map[string]any)
		require.True(t, ok, "key is not an object")
		for name := range obj {
			assert.False(t, isPrivateName(name), "private member %q", name)
		}
		switch obj["kty"] {
		case "RSA":
			assert.ElementsMatch(t, keysOf(obj), []string{"use", "kty", "kid", "alg", "n", "e"})
		case "EC":
			assert.ElementsMatch(t, keysOf(obj), []string{"use", "kty", "kid", "crv", "alg", "x", "y"})
		case "OKP":
			assert.ElementsMatch(t, keysOf(obj), []string{"use", "kty", "kid", "crv", "alg", "x"})
		default:
			t.Errorf("kty %v", obj["kty"])
		}
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// keyForms are the ways a private key can reach the writers.
var keyForms = []struct {
	name string
	// key returns the value handed to NewKey, or a hand-built Key.
	key func(priv crypto.Signer) any
}{
	{name: "private key", key: func(p crypto.Signer) any { return p }},
	{name: "public key", key: func(p crypto.Signer) any { return p.Public() }},
	{name: "signer", key: func(p crypto.Signer) any { return signerOnly{p} }},
	{name: "Key with the private key in Public", key: func(p crypto.Signer) any {
		return jwks.Key{KeyID: "hand-built", Public: p}
	}},
	{name: "Key with the private key in Public and an algorithm", key: func(p crypto.Signer) any {
		alg, _ := jwks.AlgorithmFor(p.Public())
		return jwks.Key{KeyID: "hand-built", Public: p, Algorithm: alg}
	}},
	{name: "Key with a signer in Public", key: func(p crypto.Signer) any {
		return jwks.Key{KeyID: "hand-built", Public: signerOnly{p}}
	}},
	{name: "Key with a private value in Public", key: func(p crypto.Signer) any {
		switch k := p.(type) {
		case *rsa.PrivateKey:
			return jwks.Key{KeyID: "hand-built", Public: *k}
		case *ecdsa.PrivateKey:
			return jwks.Key{KeyID: "hand-built", Public: *k}
		}
		return jwks.Key{KeyID: "hand-built", Public: []byte(p.(ed25519.PrivateKey))}
	}},
}

var privateTestKeys = []string{"rsa2048", "rsa3072", "p256", "p384", "p521", "ed25519"}

func TestNoPrivateMaterial(t *testing.T) {
	for _, name := range privateTestKeys {
		priv := testkeys.Generated(name)
		for _, form := range keyForms {
			t.Run(name+"/"+form.name, func(t *testing.T) {
				in := form.key(priv)
				hand, handBuilt := in.(jwks.Key)

				// MarshalJWK and MarshalSet of the key as given (a
				// hand-built Key) or as NewKey makes it.
				var k jwks.Key
				if handBuilt {
					k = hand
				} else {
					var err error
					k, err = jwks.NewKey(in)
					require.NoError(t, err)
					assert.IsType(t, priv.Public(), k.Public)
				}
				one, err := jwks.MarshalJWK(k)
				if err == nil {
					assertNoPrivateMembers(t, one)
					doc := []byte(set(string(one)))
					assertPublicOnly(t, doc, nil, priv)
				} else {
					assertPublicOnly(t, one, err, priv)
				}
				doc, err := jwks.MarshalSet([]jwks.Key{k})
				assertPublicOnly(t, doc, err, priv)
				doc, err = jwks.MarshalSet([]jwks.Key{k, k})
				assertPublicOnly(t, doc, err, priv)

				// Through NewKey, Keys and StaticSource, which reduce
				// keys to their public half or refuse them.
				nk, err := jwks.NewKey(in)
				if err == nil {
					doc, err = jwks.MarshalSet([]jwks.Key{nk})
				}
				assertPublicOnly(t, doc, err, priv)
				ks, err := newKeys(in, priv)
				if err == nil {
					doc, err = jwks.MarshalSet(ks)
				}
				assertPublicOnly(t, doc, err, priv)
				srcKey := k
				if handBuilt {
					srcKey = hand
				}
				src, err := jwks.NewStaticSource(srcKey)
				if err == nil {
					all, kerr := src.Keys(context.Background(), "")
					require.NoError(t, kerr)
					for _, k := range all {
						require.NoError(t, jwks.CheckPublicKey(k.Public))
					}
					doc, err = jwks.MarshalSet(all)
				}
				assertPublicOnly(t, doc, err, priv)
			})
		}
	}
}

// TestNoPrivateMaterialHandBuiltFails: a Key holding a private key, or a
// signer, is refused outright rather than reduced silently.
func TestNoPrivateMaterialHandBuiltFails(t *testing.T) {
	for _, name := range privateTestKeys {
		priv := testkeys.Generated(name)
		for _, k := range []jwks.Key{
			{KeyID: "x", Public: priv},
			{KeyID: "x", Public: signerOnly{priv}},
		} {
			_, err := jwks.MarshalSet([]jwks.Key{k})
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey, name)
			_, err = jwks.MarshalJWK(k)
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey, name)
		}
	}
}

// TestSecretEncodingsDetectLeaks checks the checker: a document that does
// hold the secret in any alignment is caught.
func TestSecretEncodingsDetectLeaks(t *testing.T) {
	priv := testkeys.Generated("p256").(*ecdsa.PrivateKey)
	d, err := priv.Bytes()
	require.NoError(t, err)
	for prefix := range 3 {
		leaked := append(make([]byte, prefix), d...)
		leaked = append(leaked, 0xff, 0xfe)
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.StdEncoding} {
			doc := enc.EncodeToString(leaked)
			found := false
			for _, e := range encodings(d) {
				found = found || strings.Contains(doc, e)
			}
			assert.True(t, found, "prefix %d", prefix)
		}
	}
}

// fuzzKeyNames are the keys FuzzMarshalSetAudit chooses from, unsupported
// ones included.
var fuzzKeyNames = []string{"rsa2048", "p256", "p384", "p521", "ed25519", "p224", "rsa1024"}

// FuzzMarshalSetAudit builds key lists from fuzz-chosen key types, forms,
// algorithms and IDs: whatever MarshalSet writes passes Audit, holds no
// private member and reads back with ParseSet as the same keys.
func FuzzMarshalSetAudit(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4}, "kid", "")
	f.Add([]byte{0x10, 0x21, 0x32}, "", "RS256")
	f.Add([]byte{0x80, 0x05, 0x16}, "\u2028<&>\"\\", "ES256")
	f.Add([]byte{0x34, 0x44}, "x", "EdDSA")
	f.Add([]byte{0x06, 0x25}, "\xff", "Ed25519")
	f.Add([]byte{}, "", "")
	privs := make([]crypto.Signer, len(fuzzKeyNames))
	for i, n := range fuzzKeyNames {
		privs[i] = testkeys.Generated(n)
	}
	f.Fuzz(func(t *testing.T, sel []byte, kid, alg string) {
		if len(sel) > 8 {
			sel = sel[:8]
		}
		var keys []jwks.Key
		for _, b := range sel {
			priv := privs[int(b&0x0f)%len(privs)]
			form := int(b>>4&0x07) % (len(keyForms) + 2)
			var k jwks.Key
			switch {
			case form < len(keyForms):
				in := keyForms[form].key(priv)
				if hk, ok := in.(jwks.Key); ok {
					k = hk
				} else {
					var err error
					if k, err = jwks.NewKey(in); err != nil {
						continue
					}
				}
			case form == len(keyForms):
				// A public key with the fuzzed ID and algorithm.
				k = jwks.Key{KeyID: kid, Public: priv.Public(), Algorithm: alg}
			default:
				nk, err := jwks.NewKeyWithID(priv, kid)
				if err != nil {
					continue
				}
				k = nk
			}
			k.ExcludeFromDiscovery = b&0x80 != 0
			keys = append(keys, k)
		}
		doc, err := jwks.MarshalSet(keys)
		if err != nil {
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
			return
		}
		require.NoError(t, jwks.Audit(doc), "%s", doc)
		assertNoPrivateMembersLoose(t, doc)
		var published []jwks.Key
		for _, k := range keys {
			if !k.ExcludeFromDiscovery {
				published = append(published, k)
			}
		}
		s, err := jwks.ParseSet(doc, jwks.ParseOptions{MaxKeys: 100})
		require.NoError(t, err)
		require.Empty(t, s.Skipped, "%s", doc)
		require.Len(t, s.Keys, len(published))
		for i, k := range published {
			got := s.Keys[i]
			require.True(t, k.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(got.Public))
			if k.Algorithm != "" {
				require.Equal(t, k.Algorithm, got.Algorithm)
			}
			if strings.ToValidUTF8(k.KeyID, "\ufffd") == k.KeyID {
				require.Equal(t, k.KeyID, got.KeyID)
			}
		}
	})
}

// assertNoPrivateMembersLoose is assertNoPrivateMembers without the exact
// member lists, for keys that may lack kid or alg.
func assertNoPrivateMembersLoose(t testing.TB, doc []byte) {
	t.Helper()
	var top struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(doc, &top))
	for _, obj := range top.Keys {
		for name := range obj {
			require.False(t, isPrivateName(name), "private member %q", name)
		}
	}
}
