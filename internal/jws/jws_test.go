package jws_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"errors"
	"io"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jws"
)

const signingInput = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDpkZWZhdWx0In0"

// testKeys holds one key of every kind the package handles, generated for
// the test that asks for them.
type testKeys struct {
	rsa                    *rsa.PrivateKey
	p224, p256, p384, p521 *ecdsa.PrivateKey
	ed                     ed25519.PrivateKey
}

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	var k testKeys
	var err error
	k.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for _, c := range []struct {
		dst   **ecdsa.PrivateKey
		curve elliptic.Curve
	}{{&k.p224, elliptic.P224()}, {&k.p256, elliptic.P256()}, {&k.p384, elliptic.P384()}, {&k.p521, elliptic.P521()}} {
		*c.dst, err = ecdsa.GenerateKey(c.curve, rand.Reader)
		require.NoError(t, err)
	}
	_, k.ed, err = ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k
}

// keyOf picks a signer from testKeys.
type keyOf func(testKeys) crypto.Signer

var (
	rsaKey  keyOf = func(k testKeys) crypto.Signer { return k.rsa }
	p224Key keyOf = func(k testKeys) crypto.Signer { return k.p224 }
	p256Key keyOf = func(k testKeys) crypto.Signer { return k.p256 }
	p384Key keyOf = func(k testKeys) crypto.Signer { return k.p384 }
	p521Key keyOf = func(k testKeys) crypto.Signer { return k.p521 }
	edKey   keyOf = func(k testKeys) crypto.Signer { return k.ed }
)

func flipBit(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x01
	return out
}

func TestSignVerifyRoundTrip(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		alg     string
		key     keyOf
		wantLen int
	}{
		{alg: "RS256", key: rsaKey, wantLen: 256},
		{alg: "RS384", key: rsaKey, wantLen: 256},
		{alg: "RS512", key: rsaKey, wantLen: 256},
		{alg: "PS256", key: rsaKey, wantLen: 256},
		{alg: "PS384", key: rsaKey, wantLen: 256},
		{alg: "PS512", key: rsaKey, wantLen: 256},
		{alg: "ES256", key: p256Key, wantLen: 64},
		{alg: "ES384", key: p384Key, wantLen: 96},
		{alg: "ES512", key: p521Key, wantLen: 132},
		{alg: "EdDSA", key: edKey, wantLen: ed25519.SignatureSize},
		{alg: "Ed25519", key: edKey, wantLen: ed25519.SignatureSize},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			signer := tt.key(keys)
			pub := signer.Public()
			sig, err := jws.Sign(tt.alg, signer, []byte(signingInput))
			require.NoError(t, err)
			require.Len(t, sig, tt.wantLen)
			require.NoError(t, jws.Verify(tt.alg, pub, signingInput, sig))

			// An empty signing input signs and verifies too.
			empty, err := jws.Sign(tt.alg, signer, nil)
			require.NoError(t, err)
			require.NoError(t, jws.Verify(tt.alg, pub, "", empty))

			tampered := []struct {
				name  string
				input string
				sig   []byte
			}{
				{name: "input changed", input: signingInput[:10] + "X" + signingInput[11:], sig: sig},
				{name: "input extended", input: signingInput + ".", sig: sig},
				{name: "input truncated", input: signingInput[:len(signingInput)-1], sig: sig},
				{name: "first signature byte flipped", input: signingInput, sig: flipBit(sig, 0)},
				{name: "middle signature byte flipped", input: signingInput, sig: flipBit(sig, len(sig)/2)},
				{name: "last signature byte flipped", input: signingInput, sig: flipBit(sig, len(sig)-1)},
				{name: "signature truncated", input: signingInput, sig: sig[:len(sig)-1]},
				{name: "signature extended", input: signingInput, sig: append(append([]byte(nil), sig...), 0)},
				{name: "empty signature", input: signingInput, sig: nil},
				{name: "signature of the empty input", input: signingInput, sig: empty},
			}
			for _, tc := range tampered {
				t.Run(tc.name, func(t *testing.T) {
					err := jws.Verify(tt.alg, pub, tc.input, tc.sig)
					require.ErrorIs(t, err, jws.ErrBadSignature)
					assert.NotErrorIs(t, err, jws.ErrAlgorithm)
				})
			}
		})
	}
}

// TestVerifyRefusesOtherAlgorithmsSignature checks that a signature made
// under one algorithm does not verify under another that fits the same key.
func TestVerifyRefusesOtherAlgorithmsSignature(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		name     string
		signAlg  string
		checkAlg string
	}{
		{name: "RS256 as RS384", signAlg: "RS256", checkAlg: "RS384"},
		{name: "RS512 as RS256", signAlg: "RS512", checkAlg: "RS256"},
		{name: "PS256 as RS256", signAlg: "PS256", checkAlg: "RS256"},
		{name: "RS256 as PS256", signAlg: "RS256", checkAlg: "PS256"},
		{name: "PS256 as PS384", signAlg: "PS256", checkAlg: "PS384"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := jws.Sign(tt.signAlg, keys.rsa, []byte(signingInput))
			require.NoError(t, err)
			require.ErrorIs(t, jws.Verify(tt.checkAlg, keys.rsa.Public(), signingInput, sig), jws.ErrBadSignature)
		})
	}
}

func TestAlgorithmMustFitKey(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		name string
		alg  string
		key  keyOf
	}{
		{name: "RS256 with an EC key", alg: "RS256", key: p256Key},
		{name: "PS256 with an EC key", alg: "PS256", key: p256Key},
		{name: "RS256 with an Ed25519 key", alg: "RS256", key: edKey},
		{name: "ES256 with an RSA key", alg: "ES256", key: rsaKey},
		{name: "ES256 with an Ed25519 key", alg: "ES256", key: edKey},
		{name: "EdDSA with an RSA key", alg: "EdDSA", key: rsaKey},
		{name: "Ed25519 with an RSA key", alg: "Ed25519", key: rsaKey},
		{name: "EdDSA with an EC key", alg: "EdDSA", key: p256Key},
		{name: "ES256 with a P-384 key", alg: "ES256", key: p384Key},
		{name: "ES384 with a P-256 key", alg: "ES384", key: p256Key},
		{name: "ES512 with a P-384 key", alg: "ES512", key: p384Key},
		{name: "ES384 with a P-521 key", alg: "ES384", key: p521Key},
		{name: "ES256 with a P-224 key", alg: "ES256", key: p224Key},
		{name: "unknown HMAC algorithm", alg: "HS256", key: rsaKey},
		{name: "none", alg: "none", key: edKey},
		{name: "empty algorithm", alg: "", key: rsaKey},
		{name: "lower-case algorithm", alg: "rs256", key: rsaKey},
		{name: "ES256K", alg: "ES256K", key: p256Key},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer := tt.key(keys)
			_, err := jws.Sign(tt.alg, signer, []byte(signingInput))
			require.ErrorIs(t, err, jws.ErrAlgorithm)

			// Verify refuses before looking at the signature, so even a
			// signature that is valid for the key's own algorithm fails.
			own := make([]byte, 64)
			if alg := ownAlg(signer); alg != "" {
				own, err = jws.Sign(alg, signer, []byte(signingInput))
				require.NoError(t, err)
			}
			err = jws.Verify(tt.alg, signer.Public(), signingInput, own)
			require.ErrorIs(t, err, jws.ErrAlgorithm)
			assert.NotErrorIs(t, err, jws.ErrBadSignature)
		})
	}
}

// ownAlg returns an algorithm that fits signer's key, or "" for P-224.
func ownAlg(signer crypto.Signer) string {
	switch pub := signer.Public().(type) {
	case *rsa.PublicKey:
		return "RS256"
	case ed25519.PublicKey:
		return "EdDSA"
	case *ecdsa.PublicKey:
		return map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[pub.Curve.Params().BitSize]
	}
	return ""
}

func TestVerifyRefusesUnusableKeys(t *testing.T) {
	keys := newTestKeys(t)
	edPub := keys.ed.Public().(ed25519.PublicKey)
	tests := []struct {
		name string
		alg  string
		pub  crypto.PublicKey
	}{
		{name: "nil key", alg: "RS256", pub: nil},
		{name: "private RSA key", alg: "RS256", pub: keys.rsa},
		{name: "RSA key by value", alg: "RS256", pub: keys.rsa.PublicKey},
		{name: "EC key by value", alg: "ES256", pub: keys.p256.PublicKey},
		{name: "EC key without a curve", alg: "ES256", pub: &ecdsa.PublicKey{}},
		{name: "pointer to an Ed25519 key", alg: "EdDSA", pub: &edPub},
		{name: "raw bytes", alg: "EdDSA", pub: []byte(edPub)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, jws.Verify(tt.alg, tt.pub, signingInput, make([]byte, 64)), jws.ErrAlgorithm)
		})
	}
}

func TestVerifyRefusesShortEd25519Key(t *testing.T) {
	keys := newTestKeys(t)
	sig, err := jws.Sign("EdDSA", keys.ed, []byte(signingInput))
	require.NoError(t, err)
	pub := keys.ed.Public().(ed25519.PublicKey)
	require.ErrorIs(t, jws.Verify("EdDSA", pub[:31], signingInput, sig), jws.ErrBadSignature)
}

// rs splits a raw ES signature into big integers.
func rs(sig []byte) (r, s *big.Int) {
	n := len(sig) / 2
	return new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
}

// raw builds a fixed-width R||S signature.
func raw(r, s *big.Int, size int) []byte {
	out := make([]byte, 2*size)
	r.FillBytes(out[:size])
	s.FillBytes(out[size:])
	return out
}

func TestVerifyRefusesMalformedECSignatures(t *testing.T) {
	keys := newTestKeys(t)
	sig, err := jws.Sign("ES256", keys.p256, []byte(signingInput))
	require.NoError(t, err)
	r, s := rs(sig)
	n := elliptic.P256().Params().N
	zero := new(big.Int)
	tests := []struct {
		name string
		sig  []byte
	}{
		{name: "empty", sig: nil},
		{name: "one byte short", sig: sig[:63]},
		{name: "one byte long", sig: append(append([]byte(nil), sig...), 0)},
		{name: "ES384 length", sig: append(append([]byte(nil), sig...), make([]byte, 32)...)},
		{name: "DER instead of raw", sig: mustDER(t, r, s)},
		{name: "zero r", sig: raw(zero, s, 32)},
		{name: "zero s", sig: raw(r, zero, 32)},
		{name: "all zero", sig: make([]byte, 64)},
		{name: "r equal to the order", sig: raw(n, s, 32)},
		{name: "s equal to the order", sig: raw(r, n, 32)},
		{name: "top byte of r changed", sig: append(append([]byte{0xff}, sig[1:32]...), sig[32:]...)},
		{name: "r and s swapped", sig: raw(s, r, 32)},
		{name: "all ones", sig: bytesOf(0xff, 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jws.Verify("ES256", keys.p256.Public(), signingInput, tt.sig)
			require.ErrorIs(t, err, jws.ErrBadSignature)
			assert.NotErrorIs(t, err, jws.ErrAlgorithm)
		})
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func mustDER(t *testing.T, r, s *big.Int) []byte {
	t.Helper()
	der, err := asn1.Marshal(struct{ R, S *big.Int }{r, s})
	require.NoError(t, err)
	return der
}

// TestVerifyHighBitRS makes signatures until r, then s, has its top bit set
// (each happens about every second signature), so that the DER INTEGER
// needs a leading zero byte to stay positive, and checks they verify.
func TestVerifyHighBitRS(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		name string
		alg  string
		key  keyOf
		half int // 0: r, 1: s
	}{
		{name: "ES256 high r", alg: "ES256", key: p256Key, half: 0},
		{name: "ES256 high s", alg: "ES256", key: p256Key, half: 1},
		{name: "ES384 high r", alg: "ES384", key: p384Key, half: 0},
		{name: "ES384 high s", alg: "ES384", key: p384Key, half: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer := tt.key(keys)
			for range 200 {
				sig, err := jws.Sign(tt.alg, signer, []byte(signingInput))
				require.NoError(t, err)
				if sig[tt.half*len(sig)/2]&0x80 == 0 {
					continue
				}
				require.NoError(t, jws.Verify(tt.alg, signer.Public(), signingInput, sig))
				return
			}
			t.Fatal("no signature with the top bit set in 200 tries")
		})
	}
}

// TestVerifyAcceptsConvertedSignASN1 checks interoperability with Go's own
// ECDSA encoding, both ways: an ASN.1 signature from ecdsa.SignASN1, turned
// into R||S as any JOSE library would, verifies; and Sign's R||S, turned
// into big integers, passes ecdsa.Verify.
func TestVerifyAcceptsConvertedSignASN1(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		alg  string
		key  *ecdsa.PrivateKey
		hash crypto.Hash
		size int
	}{
		{alg: "ES256", key: keys.p256, hash: crypto.SHA256, size: 32},
		{alg: "ES384", key: keys.p384, hash: crypto.SHA384, size: 48},
		{alg: "ES512", key: keys.p521, hash: crypto.SHA512, size: 66},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			h := tt.hash.New()
			_, _ = io.WriteString(h, signingInput)
			digest := h.Sum(nil)

			for range 8 {
				der, err := ecdsa.SignASN1(rand.Reader, tt.key, digest)
				require.NoError(t, err)
				var parsed struct{ R, S *big.Int }
				rest, err := asn1.Unmarshal(der, &parsed)
				require.NoError(t, err)
				require.Empty(t, rest)
				require.NoError(t, jws.Verify(tt.alg, &tt.key.PublicKey, signingInput, raw(parsed.R, parsed.S, tt.size)))

				sig, err := jws.Sign(tt.alg, tt.key, []byte(signingInput))
				require.NoError(t, err)
				r, s := rs(sig)
				require.True(t, ecdsa.Verify(&tt.key.PublicKey, digest, r, s))
			}
		})
	}
}

// TestRSAInterop checks Sign's RSA signatures against crypto/rsa directly,
// and that Verify accepts crypto/rsa's PSS signatures with the salt length
// RFC 7518 requires (the hash size).
func TestRSAInterop(t *testing.T) {
	keys := newTestKeys(t)
	tests := []struct {
		alg  string
		hash crypto.Hash
	}{
		{alg: "RS256", hash: crypto.SHA256},
		{alg: "RS384", hash: crypto.SHA384},
		{alg: "RS512", hash: crypto.SHA512},
		{alg: "PS256", hash: crypto.SHA256},
		{alg: "PS384", hash: crypto.SHA384},
		{alg: "PS512", hash: crypto.SHA512},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			h := tt.hash.New()
			_, _ = io.WriteString(h, signingInput)
			digest := h.Sum(nil)
			pub := &keys.rsa.PublicKey

			sig, err := jws.Sign(tt.alg, keys.rsa, []byte(signingInput))
			require.NoError(t, err)
			if tt.alg[0] == 'R' {
				require.NoError(t, rsa.VerifyPKCS1v15(pub, tt.hash, digest, sig))
				theirs, err := rsa.SignPKCS1v15(rand.Reader, keys.rsa, tt.hash, digest)
				require.NoError(t, err)
				require.NoError(t, jws.Verify(tt.alg, pub, signingInput, theirs))
				return
			}
			require.NoError(t, rsa.VerifyPSS(pub, tt.hash, digest, sig, &rsa.PSSOptions{SaltLength: tt.hash.Size()}))
			theirs, err := rsa.SignPSS(rand.Reader, keys.rsa, tt.hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
			require.NoError(t, err)
			require.NoError(t, jws.Verify(tt.alg, pub, signingInput, theirs))
		})
	}
}

// fakeSigner returns a fixed answer, to exercise Sign's handling of signers
// that misbehave.
type fakeSigner struct {
	pub crypto.PublicKey
	sig []byte
	err error
}

func (f fakeSigner) Public() crypto.PublicKey { return f.pub }

func (f fakeSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return f.sig, f.err
}

func TestSignWithMisbehavingSigner(t *testing.T) {
	keys := newTestKeys(t)
	errHSM := errors.New("hsm unavailable")
	huge := new(big.Int).Lsh(big.NewInt(1), 300) // 38 bytes: does not fit ES256
	tests := []struct {
		name    string
		alg     string
		signer  fakeSigner
		wantErr error // nil: any error
	}{
		{name: "RSA signer error is passed on", alg: "RS256", signer: fakeSigner{pub: keys.rsa.Public(), err: errHSM}, wantErr: errHSM},
		{name: "PSS signer error is passed on", alg: "PS256", signer: fakeSigner{pub: keys.rsa.Public(), err: errHSM}, wantErr: errHSM},
		{name: "EC signer error is passed on", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), err: errHSM}, wantErr: errHSM},
		{name: "Ed25519 signer error is passed on", alg: "EdDSA", signer: fakeSigner{pub: keys.ed.Public(), err: errHSM}, wantErr: errHSM},
		{name: "EC signer returns garbage", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), sig: []byte("not DER")}},
		{name: "EC signer returns raw R||S", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), sig: make([]byte, 64)}},
		{name: "EC signer returns an oversized r", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), sig: mustDER(t, huge, big.NewInt(1))}},
		{name: "EC signer returns a negative r", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), sig: mustDER(t, big.NewInt(-5), big.NewInt(1))}},
		{name: "EC signer returns a zero s", alg: "ES256", signer: fakeSigner{pub: keys.p256.Public(), sig: mustDER(t, big.NewInt(5), big.NewInt(0))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := jws.Sign(tt.alg, tt.signer, []byte(signingInput))
			require.Error(t, err)
			assert.Nil(t, sig)
			assert.NotErrorIs(t, err, jws.ErrAlgorithm)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}
