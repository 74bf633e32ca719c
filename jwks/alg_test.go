package jwks_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// oddModulus returns an odd number of exactly bits bits. CheckPublicKey
// does not test primality, so it stands in for a modulus too large to
// generate in a test.
func oddModulus(bits int) *big.Int {
	n := new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
	return n.SetBit(n, 0, 1)
}

func TestCheckPublicKey(t *testing.T) {
	rsaPub := testkeys.K8sRSA().Public().(*rsa.PublicKey)
	withE := func(e int) *rsa.PublicKey { return &rsa.PublicKey{N: rsaPub.N, E: e} }
	e31 := int64(1)<<31 + 1
	withN := func(n *big.Int) *rsa.PublicKey { return &rsa.PublicKey{N: n, E: 65537} }
	tests := []struct {
		name string
		key  any
		ok   bool
	}{
		{name: "RSA 2048", key: rsaPub, ok: true},
		{name: "RSA 3072", key: testkeys.Generated("rsa3072").Public(), ok: true},
		{name: "RSA e=3", key: withE(3), ok: true},
		{name: "RSA e=65537", key: withE(jwks.MaxRSAExponent), ok: true},
		{name: "RSA e=65539", key: withE(jwks.MaxRSAExponent + 2)},
		{name: "RSA e=2^31-1", key: withE(1<<31 - 1)},
		{name: "RSA modulus of MaxRSABits", key: withN(oddModulus(jwks.MaxRSABits)), ok: true},
		{name: "P-256", key: testkeys.Generated("p256").Public(), ok: true},
		{name: "P-384", key: testkeys.Generated("p384").Public(), ok: true},
		{name: "P-521", key: testkeys.Generated("p521").Public(), ok: true},
		{name: "Ed25519", key: testkeys.Generated("ed25519").Public(), ok: true},

		{name: "nil", key: nil},
		{name: "RSA private key", key: testkeys.K8sRSA()},
		{name: "EC private key", key: testkeys.K8sEC()},
		{name: "Ed25519 private key", key: testkeys.Generated("ed25519")},
		{name: "RSA value, not pointer", key: *rsaPub},
		{name: "nil *rsa.PublicKey", key: (*rsa.PublicKey)(nil)},
		{name: "RSA without modulus", key: &rsa.PublicKey{E: 65537}},
		{name: "RSA 1024", key: testkeys.Generated("rsa1024").Public()},
		{name: "RSA modulus of MinRSABits-1", key: withN(oddModulus(jwks.MinRSABits - 1))},
		{name: "RSA modulus of MaxRSABits+1", key: withN(oddModulus(jwks.MaxRSABits + 1))},
		{name: "RSA even modulus", key: withN(new(big.Int).Add(rsaPub.N, big.NewInt(1)))},
		{name: "RSA negative modulus", key: withN(new(big.Int).Neg(rsaPub.N))},
		{name: "RSA e=1", key: withE(1)},
		{name: "RSA e=0", key: withE(0)},
		{name: "RSA e=-65537", key: withE(-65537)},
		{name: "RSA e even", key: withE(65536)},
		{name: "RSA e=2^31+1 (wraps negative where int has 32 bits)", key: withE(int(e31))},
		{name: "nil *ecdsa.PublicKey", key: (*ecdsa.PublicKey)(nil)},
		{name: "EC without curve", key: &ecdsa.PublicKey{}},
		{name: "EC without point", key: &ecdsa.PublicKey{Curve: elliptic.P256()}},
		{name: "EC point off the curve", key: offCurveKey(t)},
		{name: "P-224", key: testkeys.Generated("p224").Public()},
		{name: "Ed25519 31 bytes", key: ed25519.PublicKey(make([]byte, 31))},
		{name: "Ed25519 nil", key: ed25519.PublicKey(nil)},
		{name: "bytes", key: make([]byte, 32)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jwks.CheckPublicKey(tt.key)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			requireUnsupported(t, err, "")
		})
	}
}

// offCurveKey returns a P-256 public key whose point is not on the curve.
func offCurveKey(t *testing.T) *ecdsa.PublicKey {
	t.Helper()
	raw, err := testkeys.K8sEC().PublicKey.Bytes()
	require.NoError(t, err)
	raw[len(raw)-1] ^= 1
	//lint:ignore SA1019 only the deprecated fields can hold an invalid point
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(raw[1:33]), Y: new(big.Int).SetBytes(raw[33:])}
}

func TestAlgorithmFor(t *testing.T) {
	tests := []struct {
		name string
		key  any
		want string
	}{
		{name: "RSA", key: testkeys.K8sRSA().Public(), want: jwks.RS256},
		{name: "RSA 3072", key: testkeys.Generated("rsa3072").Public(), want: jwks.RS256},
		{name: "P-256", key: testkeys.K8sEC().Public(), want: jwks.ES256},
		{name: "P-384", key: testkeys.Generated("p384").Public(), want: jwks.ES384},
		{name: "P-521", key: testkeys.Generated("p521").Public(), want: jwks.ES512},
		{name: "Ed25519", key: testkeys.Generated("ed25519").Public(), want: jwks.EdDSA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.AlgorithmFor(tt.key)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.True(t, jwks.Fits(got, tt.key))
		})
	}
	for _, bad := range []any{nil, testkeys.K8sRSA(), testkeys.Generated("p224").Public(), testkeys.Generated("rsa1024").Public()} {
		alg, err := jwks.AlgorithmFor(bad)
		require.ErrorIs(t, err, jwks.ErrUnsupportedKey, "%T", bad)
		assert.Empty(t, alg)
	}
}

func TestFits(t *testing.T) {
	rsaPub := testkeys.K8sRSA().Public()
	p256 := testkeys.K8sEC().Public()
	p384 := testkeys.Generated("p384").Public()
	p521 := testkeys.Generated("p521").Public()
	ed := testkeys.Generated("ed25519").Public()
	all := []string{jwks.RS256, jwks.RS384, jwks.RS512, jwks.PS256, jwks.PS384, jwks.PS512, jwks.ES256, jwks.ES384, jwks.ES512, jwks.EdDSA, jwks.Ed25519, "HS256", "none", "", "rs256", "ES256K"}
	tests := []struct {
		name string
		key  any
		fits []string
	}{
		{name: "RSA", key: rsaPub, fits: []string{jwks.RS256, jwks.RS384, jwks.RS512, jwks.PS256, jwks.PS384, jwks.PS512}},
		{name: "P-256", key: p256, fits: []string{jwks.ES256}},
		{name: "P-384", key: p384, fits: []string{jwks.ES384}},
		{name: "P-521", key: p521, fits: []string{jwks.ES512}},
		{name: "Ed25519", key: ed, fits: []string{jwks.EdDSA, jwks.Ed25519}},
		{name: "P-224", key: testkeys.Generated("p224").Public()},
		{name: "RSA private key", key: testkeys.K8sRSA()},
		{name: "nil", key: nil},
		{name: "nil *rsa.PublicKey", key: (*rsa.PublicKey)(nil)},
		{name: "nil *ecdsa.PublicKey", key: (*ecdsa.PublicKey)(nil)},
		{name: "EC without curve", key: &ecdsa.PublicKey{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, alg := range all {
				want := false
				for _, f := range tt.fits {
					want = want || f == alg
				}
				assert.Equal(t, want, jwks.Fits(alg, tt.key), "alg %q", alg)
			}
		})
	}
}
