package extsigner_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

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
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys: []extsigner.RingKey{{Signer: testkeys.Generated("p256"), Role: extsigner.RolePrimary}},
		Now:  func() time.Time { return now },
	})
	require.NoError(f, err)
	pub := ring.Primary()
	f.Fuzz(func(t *testing.T, claims string) {
		signed, err := ring.Sign(context.Background(), claims)
		if err != nil {
			require.ErrorIs(t, err, extsigner.ErrInvalidClaims)
			return
		}
		_, err = tokens.ParseClaims(mustDecode(t, claims))
		require.NoError(t, err)
		require.NoError(t, verifies(pub.Algorithm, pub.Public, signed.Header, claims, signed.Signature))
		require.LessOrEqual(t, len(signed.Header)+len(claims)+len(signed.Signature)+2, extsigner.MaxTokenBytes)
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	require.NoError(t, err)
	return b
}
