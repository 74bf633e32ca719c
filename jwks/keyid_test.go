package jwks_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// pemPublicKey returns the single public key in one of testkeys' PEM files.
func pemPublicKey(t testing.TB, name string) crypto.PublicKey {
	t.Helper()
	keys, err := jwks.ParsePublicKeysPEM(testkeys.PEM(name))
	require.NoError(t, err)
	require.Len(t, keys, 1)
	return keys[0]
}

// TestKeyIDKubernetesVectors checks the key IDs Kubernetes pins for its
// test keys ("must not change", keyid_test.go), from each form of the key.
func TestKeyIDKubernetesVectors(t *testing.T) {
	tests := []struct {
		name string
		key  func(t *testing.T) any
		want string
	}{
		{name: "RSA public key file", key: func(t *testing.T) any { return pemPublicKey(t, "k8s-rsa.pub.pem") }, want: testkeys.K8sRSAKeyID},
		{name: "RSA private key", key: func(*testing.T) any { return testkeys.K8sRSA() }, want: testkeys.K8sRSAKeyID},
		{name: "RSA private key file", key: func(t *testing.T) any { return pemPublicKey(t, "k8s-rsa.key.pem") }, want: testkeys.K8sRSAKeyID},
		{name: "RSA signer", key: func(*testing.T) any { return signerOnly{testkeys.K8sRSA()} }, want: testkeys.K8sRSAKeyID},
		{name: "EC public key file", key: func(t *testing.T) any { return pemPublicKey(t, "k8s-ec.pub.pem") }, want: testkeys.K8sECKeyID},
		{name: "EC private key", key: func(*testing.T) any { return testkeys.K8sEC() }, want: testkeys.K8sECKeyID},
		{name: "EC private key file", key: func(t *testing.T) any { return pemPublicKey(t, "k8s-ec.key.pem") }, want: testkeys.K8sECKeyID},
		{name: "EC public half", key: func(*testing.T) any { return &testkeys.K8sEC().PublicKey }, want: testkeys.K8sECKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.KeyID(tt.key(t))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestKeyIDIsNotThumbprint(t *testing.T) {
	kid, err := jwks.KeyID(testkeys.K8sRSA())
	require.NoError(t, err)
	tp, err := jwks.Thumbprint(testkeys.K8sRSA())
	require.NoError(t, err)
	assert.NotEqual(t, kid, tp)
	other, err := jwks.KeyID(testkeys.K8sOtherRSAPublic())
	require.NoError(t, err)
	assert.NotEqual(t, kid, other)
}

// TestKeyIDLength: 43 characters (32 bytes, unpadded base64url) for every
// key type, for both derivations.
func TestKeyIDLength(t *testing.T) {
	for _, name := range []string{"rsa2048", "rsa3072", "p256", "p384", "p521", "ed25519"} {
		t.Run(name, func(t *testing.T) {
			key := testkeys.Generated(name)
			for _, derive := range []func(crypto.PublicKey) (string, error){jwks.KeyID, jwks.Thumbprint} {
				id, err := derive(key)
				require.NoError(t, err)
				assert.Len(t, id, 43)
				raw, err := base64.RawURLEncoding.Strict().DecodeString(id)
				require.NoError(t, err)
				assert.Len(t, raw, 32)
				fromPublic, err := derive(key.Public())
				require.NoError(t, err)
				assert.Equal(t, id, fromPublic, "private and public key give the same ID")
			}
		})
	}
}

// rsaFromB64 builds an RSA public key from base64url n and e.
func rsaFromB64(t testing.TB, n, e string) *rsa.PublicKey {
	t.Helper()
	nb, err := base64.RawURLEncoding.DecodeString(n)
	require.NoError(t, err)
	eb, err := base64.RawURLEncoding.DecodeString(e)
	require.NoError(t, err)
	return &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: int(new(big.Int).SetBytes(eb).Int64())}
}

// parseOne reads a single key object with ParseSet.
func parseOne(t testing.TB, obj string) jwks.Key {
	t.Helper()
	s, err := jwks.ParseSet([]byte(set(obj)), jwks.ParseOptions{})
	require.NoError(t, err)
	require.Empty(t, s.Skipped)
	require.Len(t, s.Keys, 1)
	return s.Keys[0]
}

func TestThumbprintVectors(t *testing.T) {
	tests := []struct {
		name string
		key  func(t *testing.T) any
		want string
	}{
		{name: "Kubernetes RSA test key", key: func(*testing.T) any { return testkeys.K8sRSA() }, want: testkeys.K8sRSAThumbprint},
		{name: "Kubernetes RSA test key, public", key: func(t *testing.T) any { return pemPublicKey(t, "k8s-rsa.pub.pem") }, want: testkeys.K8sRSAThumbprint},
		{name: "RFC 7638 §3.1", key: func(t *testing.T) any { return rsaFromB64(t, rfc7638N, "AQAB") }, want: rfc7638Thumbprint},
		{name: "RFC 7638 §3.1 from RFC 7517 A.1", key: func(t *testing.T) any { return parseSetKeys(t, rfc7517A1)[0].Public }, want: rfc7638Thumbprint},
		{name: "RFC 8037 A.3 Ed25519", key: func(t *testing.T) any { return parseOne(t, okpJWK).Public }, want: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"},
		{name: "RFC 8037 A.1 Ed25519 private", key: func(t *testing.T) any {
			seed, err := base64.RawURLEncoding.DecodeString(rfc8037D)
			require.NoError(t, err)
			return ed25519.NewKeyFromSeed(seed)
		}, want: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"},
		{name: "RFC 7520 §3.1 P-521 (x has a leading zero byte)", key: func(t *testing.T) any { return parseOne(t, rfc7520EC).Public }, want: rfc7520ECThumbprint},
		{name: "RFC 7520 §3.3 RSA", key: func(t *testing.T) any { return parseOne(t, rfc7520RSA).Public }, want: rfc7520RSAThumbprint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.Thumbprint(tt.key(t))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestThumbprintMatchesJWX: jwx v3's AssignKeyID sets kid to the RFC 7638
// SHA-256 thumbprint, for RSA, P-384 and Ed25519 keys.
func TestThumbprintMatchesJWX(t *testing.T) {
	s, err := jwks.ParseSet(jwxFile(t, "public.json"), jwks.ParseOptions{})
	require.NoError(t, err)
	require.Empty(t, s.Skipped)
	require.Len(t, s.Keys, 3)
	for _, k := range s.Keys {
		tp, err := jwks.Thumbprint(k.Public)
		require.NoError(t, err)
		assert.Equal(t, k.KeyID, tp, "%T", k.Public)
	}
}

func TestKeyIDErrors(t *testing.T) {
	tests := []struct {
		name string
		key  any
	}{
		{name: "nil", key: nil},
		{name: "string", key: "bogus"},
		{name: "P-224", key: testkeys.Generated("p224")},
		{name: "RSA 1024", key: testkeys.Generated("rsa1024")},
		{name: "RSA 1024 public", key: testkeys.Generated("rsa1024").Public()},
		{name: "nil *rsa.PrivateKey", key: (*rsa.PrivateKey)(nil)},
		{name: "nil *ecdsa.PrivateKey", key: (*ecdsa.PrivateKey)(nil)},
		{name: "nil *rsa.PublicKey", key: (*rsa.PublicKey)(nil)},
		{name: "short ed25519.PrivateKey", key: ed25519.PrivateKey(make([]byte, 10))},
		{name: "short ed25519.PublicKey", key: ed25519.PublicKey(make([]byte, 31))},
		{name: "signer of an unsupported key", key: signerOnly{testkeys.Generated("p224")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, derive := range []func(crypto.PublicKey) (string, error){jwks.KeyID, jwks.Thumbprint} {
				id, err := derive(tt.key)
				requireUnsupported(t, err, "")
				assert.Empty(t, id)
			}
		})
	}
}

func TestPublicKey(t *testing.T) {
	for _, name := range []string{"rsa2048", "p256", "p384", "p521", "ed25519"} {
		t.Run(name, func(t *testing.T) {
			priv := testkeys.Generated(name)
			want := priv.Public()
			for _, in := range []any{priv, want, signerOnly{priv}} {
				got, err := jwks.PublicKey(in)
				require.NoError(t, err)
				assert.True(t, want.(interface{ Equal(crypto.PublicKey) bool }).Equal(got), "%T", in)
				assert.IsType(t, want, got)
			}
		})
	}
}
