package extsigner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// FuzzCheckHeader: CheckHeader never panics; what it accepts
// kube-apiserver accepts too, and its Kubernetes flag says exactly whether
// kube-apiserver refuses what it refuses.
func FuzzCheckHeader(f *testing.F) {
	for _, h := range []string{
		`{"alg":"ES256","kid":"k","typ":"JWT"}`,
		`{"typ":"JWT","kid":"\u003ck","alg":"RS256"}`,
		`{"ALG":"ES256","kid":"k","typ":"JWT"}`,
		`{"alg":"none","alg":"ES256","kid":"k","typ":"JWT"}`,
		`{"alg":"ES256","kid":"k","typ":"JWT"} trailing`,
		`{"alg":"ES256","kid":"k","typ":"JWT","x":1}`,
		`{"alg":"ES256","kid":"","typ":"JWT"}`,
		`[]`, ``, `{`,
	} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(h)))
	}
	f.Add("eyJhbGciOiJFUzI1NiJ9=")
	f.Add("eyJhbGciOi\nJFUzI1NiJ9")
	f.Fuzz(func(t *testing.T, header string) {
		h, err := CheckHeader(header)
		kube := kubernetesHeader(header)
		if err == nil {
			require.NoError(t, kube, "ksa accepts what kube-apiserver refuses")
			require.True(t, AllowedAlgorithm(h.Algorithm))
			require.Equal(t, "JWT", h.Type)
			require.NotEmpty(t, h.KeyID)
			return
		}
		cerr, ok := err.(*CheckError)
		require.True(t, ok, "%T", err)
		require.Equal(t, kube != nil, cerr.Kubernetes)
		require.Equal(t, Header{}, h)
	})
}

// FuzzSign: Sign never panics on any claims; what it signs is a token
// whose claims ksa parses and whose signature verifies with the published
// key.
func FuzzSign(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	exp := now.Add(time.Hour).Unix()
	for _, c := range []string{
		`{"exp":` + itoa(exp) + `}`,
		`{"exp":` + itoa(exp) + `,"aud":["a"],"iss":"x","kubernetes.io":{"namespace":"n"}}`,
		`{"exp":` + itoa(exp) + `,"exp":1}`,
		`{"exp":"1"}`, `[]`, `{}`, `null`, "{\"exp\":1,\"x\":\"\xff\"}",
	} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(c)))
	}
	f.Add("")
	f.Add("e30=")
	f.Add("e30\r")
	ring, err := NewRing(RingConfig{
		Keys: []RingKey{{Signer: testkeys.Generated("p256"), Role: RolePrimary}},
		Now:  func() time.Time { return now },
	})
	require.NoError(f, err)
	pub := ring.Primary()
	f.Fuzz(func(t *testing.T, claims string) {
		signed, err := ring.Sign(context.Background(), claims)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidClaims)
			return
		}
		_, err = tokens.ParseClaims(mustDecode(t, claims))
		require.NoError(t, err)
		require.NoError(t, CheckSignature(pub.Algorithm, pub.Public, signed.Header, claims, signed.Signature))
		require.LessOrEqual(t, len(signed.Header)+len(claims)+len(signed.Signature)+2, MaxTokenBytes)
	})
}

// FuzzParseKeySet: ParseKeySet never panics; every key it returns is one
// ksa and kube-apiserver can use.
func FuzzParseKeySet(f *testing.F) {
	der, err := x509.MarshalPKIXPublicKey(testkeys.Generated("p256").Public())
	require.NoError(f, err)
	f.Add(der, "k", false, int64(60))
	f.Add(der, "", true, int64(0))
	f.Add([]byte{0x30, 0x00}, "k", false, int64(1))
	rsaDER, err := x509.MarshalPKIXPublicKey(testkeys.Generated("rsa2048").Public())
	require.NoError(f, err)
	f.Add(rsaDER, "r", true, int64(1<<40))
	f.Fuzz(func(t *testing.T, der []byte, kid string, exclude bool, hint int64) {
		set, err := ParseKeySet(RawKeySet{
			Keys:          []RawKey{{KeyID: kid, DER: der, ExcludeFromDiscovery: exclude}},
			DataTimestamp: time.Unix(1, 0), RefreshHintSeconds: hint,
		})
		for _, k := range set.Keys {
			_, cerr := k.Check()
			require.NoError(t, cerr)
			require.True(t, AllowedAlgorithm(k.Algorithm))
			if ec, ok := k.Public.(*ecdsa.PublicKey); ok {
				require.NotEqual(t, elliptic.P224(), ec.Curve)
			}
		}
		if err == nil {
			require.Len(t, set.Keys, 1)
			require.False(t, exclude, "a set with every key excluded is refused")
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	require.NoError(t, err)
	return b
}
