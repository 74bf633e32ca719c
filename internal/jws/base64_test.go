package jws_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jws"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{name: "empty", in: "", want: "", ok: true},
		{name: "plain", in: "eyJhbGciOiJSUzI1NiJ9", want: `{"alg":"RS256"}`, ok: true},
		{name: "url alphabet", in: "-_8", want: "\xfb\xff", ok: true},
		{name: "standard alphabet", in: "+/8"},
		{name: "padding", in: "YQ=="},
		{name: "line feed", in: "eyJh\nbGci"},
		{name: "carriage return", in: "eyJh\rbGci"},
		{name: "space", in: "eyJh bGci"},
		{name: "non-zero trailing bits", in: "YR"},
		{name: "impossible length", in: "Y"},
		{name: "NUL", in: "YQ\x00"},
		{name: "high byte", in: "YQ\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jws.Decode(tc.in, nil)
			if !tc.ok {
				require.ErrorIs(t, err, jws.ErrBase64)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	// A buffer large enough is reused.
	buf := make([]byte, 0, 64)
	got, err := jws.Decode("eyJhbGciOiJSUzI1NiJ9", buf)
	require.NoError(t, err)
	assert.Equal(t, &buf[:1][0], &got[0])
}

func TestAlgorithmTable(t *testing.T) {
	for _, alg := range []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"} {
		assert.True(t, jws.Known(alg), alg)
		name := []byte(alg)
		assert.Equal(t, alg, jws.Intern(name))
	}
	for _, alg := range []string{"none", "None", "HS256", "HS384", "HS512", "ES256K", "RSA-OAEP", "", "rs256"} {
		assert.False(t, jws.Known(alg), alg)
		assert.Equal(t, alg, jws.Intern([]byte(alg)))
	}
}
