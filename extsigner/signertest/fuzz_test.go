package signertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/testkeys"
)

// FuzzCheckHeader: CheckHeader never panics; what it accepts
// kube-apiserver accepts too, and its sentinel (ErrKubernetes or
// ErrStrict) says exactly whether kube-apiserver refuses what it refuses.
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
			require.True(t, extsigner.AllowedAlgorithm(h.Algorithm))
			require.Equal(t, "JWT", h.Type)
			require.NotEmpty(t, h.KeyID)
			return
		}
		require.Equal(t, kube != nil, errors.Is(err, ErrKubernetes))
		require.Equal(t, kube == nil, errors.Is(err, ErrStrict))
		require.Equal(t, Header{}, h)
	})
}

// FuzzParseKeySet: parseKeySet never panics; every key it returns is one
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
		set, err := parseKeySet(rawKeySet{
			Keys:          []rawKey{{KeyID: kid, DER: der, ExcludeFromDiscovery: exclude}},
			DataTimestamp: time.Unix(1, 0), RefreshHintSeconds: hint,
		})
		for _, k := range set.Keys {
			_, cerr := k.Check()
			require.NoError(t, cerr)
			require.True(t, extsigner.AllowedAlgorithm(k.Algorithm))
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
