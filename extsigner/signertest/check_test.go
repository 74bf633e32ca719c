package signertest

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
)

// TestCheckHeader: each header is refused or accepted, and the error's
// sentinel says whether kube-apiserver's own check refuses it too.
func TestCheckHeader(t *testing.T) {
	long := strings.Repeat("k", extsigner.MaxKeyIDBytes)
	tests := []struct {
		name       string
		header     string // base64url unless raw
		raw        bool
		want       Header
		wantErr    bool
		kubernetes bool // kube-apiserver refuses it too
	}{
		{name: "ours", header: `{"alg":"ES256","kid":"k","typ":"JWT"}`, want: Header{Algorithm: "ES256", KeyID: "k", Type: "JWT"}},
		{name: "other order", header: `{"typ":"JWT","kid":"k","alg":"RS256"}`, want: Header{Algorithm: "RS256", KeyID: "k", Type: "JWT"}},
		{name: "whitespace", header: ` { "alg" : "ES384" , "kid" : "k" , "typ" : "JWT" } `, want: Header{Algorithm: "ES384", KeyID: "k", Type: "JWT"}},
		{name: "kid of 1024 bytes", header: `{"alg":"ES512","kid":"` + long + `","typ":"JWT"}`, want: Header{Algorithm: "ES512", KeyID: long, Type: "JWT"}},
		{name: "escaped kid", header: `{"alg":"ES256","kid":"\u003ck\u003e","typ":"JWT"}`, want: Header{Algorithm: "ES256", KeyID: "<k>", Type: "JWT"}},

		{name: "empty", header: ``, raw: true, wantErr: true, kubernetes: true},
		{name: "standard base64", header: base64.StdEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"k>>","typ":"JWT"}`)), raw: true, wantErr: true, kubernetes: true},
		{name: "no typ", header: `{"alg":"ES256","kid":"k"}`, wantErr: true, kubernetes: true},
		{name: "typ jwt", header: `{"alg":"ES256","kid":"k","typ":"jwt"}`, wantErr: true, kubernetes: true},
		{name: "no kid", header: `{"alg":"ES256","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "empty kid", header: `{"alg":"ES256","kid":"","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "kid of 1025 bytes", header: `{"alg":"ES256","kid":"` + long + `k","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "PS256", header: `{"alg":"PS256","kid":"k","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "EdDSA", header: `{"alg":"EdDSA","kid":"k","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "none", header: `{"alg":"none","kid":"k","typ":"JWT"}`, wantErr: true, kubernetes: true},
		{name: "another member", header: `{"alg":"ES256","kid":"k","typ":"JWT","x5u":"https://evil"}`, wantErr: true, kubernetes: true},
		{name: "not an object", header: `["ES256"]`, wantErr: true, kubernetes: true},
		{name: "kid a number", header: `{"alg":"ES256","kid":1,"typ":"JWT"}`, wantErr: true, kubernetes: true},

		// What kube-apiserver lets through.
		{name: "non-zero trailing bits", header: trailingBits(b64(`{"alg":"ES256","kid":"k","typ":"JWT"}`)), raw: true, wantErr: true},
		{name: "line feed", header: b64(`{"alg":"ES256","kid":"k","typ":"JWT"}`)[:10] + "\n" + b64(`{"alg":"ES256","kid":"k","typ":"JWT"}`)[10:], raw: true, wantErr: true},
		{name: "member in another case", header: `{"ALG":"ES256","kid":"k","typ":"JWT"}`, wantErr: true},
		{name: "member twice", header: `{"alg":"none","alg":"ES256","kid":"k","typ":"JWT"}`, wantErr: true},
		{name: "trailing data", header: `{"alg":"ES256","kid":"k","typ":"JWT"}{"alg":"none"}`, wantErr: true},
		{name: "invalid UTF-8 in kid", header: "{\"alg\":\"ES256\",\"kid\":\"k\xff\",\"typ\":\"JWT\"}", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := tt.header
			if !tt.raw {
				header = b64(tt.header)
			}
			h, err := CheckHeader(header)
			if !tt.wantErr {
				require.NoError(t, err)
				assert.Equal(t, tt.want, h)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.kubernetes, errors.Is(err, ErrKubernetes), "kube-apiserver refuses it too")
			assert.Equal(t, !tt.kubernetes, errors.Is(err, ErrStrict))
			assert.Equal(t, Header{}, h)
		})
	}
}

// trailingBits sets a trailing bit of an encoding whose length is not a
// multiple of four.
func trailingBits(s string) string { return s[:len(s)-1] + string(s[len(s)-1]+1) }

func TestCheckSigningKey(t *testing.T) {
	pub := mustKey(t, key("p256").Public())
	legacy := excluded(t, key("rsa2048").Public())
	set := extsigner.KeySet{Keys: []jwks.Key{pub, legacy}}
	k, err := checkSigningKey(Header{Algorithm: "ES256", KeyID: pub.KeyID}, set)
	require.NoError(t, err)
	assert.Equal(t, pub, k)

	tests := []struct {
		name       string
		h          Header
		kubernetes bool
	}{
		{name: "excluded from discovery", h: Header{Algorithm: "RS256", KeyID: legacy.KeyID}, kubernetes: true},
		{name: "not published", h: Header{Algorithm: "ES256", KeyID: "elsewhere"}},
		{name: "alg that does not fit", h: Header{Algorithm: "ES384", KeyID: pub.KeyID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkSigningKey(tt.h, set)
			require.Error(t, err)
			assert.Equal(t, tt.kubernetes, errors.Is(err, ErrKubernetes))
			assert.Equal(t, !tt.kubernetes, errors.Is(err, ErrStrict))
		})
	}
}

func TestCheckSignature(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	signed, err := ring.Sign(t.Context(), claims)
	require.NoError(t, err)
	pub := ring.Primary().Public
	require.NoError(t, checkSignature("ES256", pub, signed.Header, claims, signed.Signature))

	flipped := []byte(signed.Signature)
	flipped[5] ^= 0x01
	tests := []struct {
		name, alg, claims, sig string
		kubernetes             bool
	}{
		{name: "empty", alg: "ES256", claims: claims, sig: "", kubernetes: true},
		{name: "standard base64", alg: "ES256", claims: claims, sig: strings.NewReplacer("-", "+", "_", "/").Replace(signed.Signature) + "+/"},
		{name: "padded", alg: "ES256", claims: claims, sig: signed.Signature + "=="},
		{name: "other claims", alg: "ES256", claims: claims + "AA", sig: signed.Signature},
		{name: "flipped bit", alg: "ES256", claims: claims, sig: string(flipped)},
		{name: "alg of another curve", alg: "ES384", claims: claims, sig: signed.Signature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSignature(tt.alg, pub, signed.Header, tt.claims, tt.sig)
			require.Error(t, err)
			assert.Equal(t, tt.kubernetes, errors.Is(err, ErrKubernetes))
			assert.Equal(t, !tt.kubernetes, errors.Is(err, ErrStrict))
		})
	}
}

func der(t testing.TB, pub any) []byte {
	t.Helper()
	b, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return b
}

// TestParseKeySet: kube-apiserver's checks of a FetchKeys answer
// (ErrKubernetes) and the stricter ones it skips (ErrStrict).
func TestParseKeySet(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p256 := der(t, key("p256").Public())
	rsa := der(t, key("rsa2048").Public())
	good := func() rawKeySet {
		return rawKeySet{
			Keys:          []rawKey{{KeyID: "a", DER: p256}, {KeyID: "b", DER: rsa, ExcludeFromDiscovery: true}},
			DataTimestamp: now, RefreshHintSeconds: 60,
		}
	}
	set, err := parseKeySet(good())
	require.NoError(t, err)
	require.Len(t, set.Keys, 2)
	assert.Equal(t, "a", set.Keys[0].KeyID)
	assert.Equal(t, jwks.ES256, set.Keys[0].Algorithm)
	assert.True(t, set.Keys[1].ExcludeFromDiscovery)
	assert.Equal(t, time.Minute, set.RefreshHint)
	assert.Equal(t, now, set.DataTimestamp)

	tests := []struct {
		name       string
		edit       func(*rawKeySet)
		kubernetes bool
	}{
		{name: "zero refresh hint", edit: func(s *rawKeySet) { s.RefreshHintSeconds = 0 }, kubernetes: true},
		{name: "negative refresh hint", edit: func(s *rawKeySet) { s.RefreshHintSeconds = -1 }, kubernetes: true},
		{name: "no data timestamp", edit: func(s *rawKeySet) { s.DataTimestamp = time.Time{} }, kubernetes: true},
		{name: "no keys", edit: func(s *rawKeySet) { s.Keys = nil }, kubernetes: true},
		{name: "empty key ID", edit: func(s *rawKeySet) { s.Keys[0].KeyID = "" }, kubernetes: true},
		{name: "key ID of 1025 bytes", edit: func(s *rawKeySet) { s.Keys[0].KeyID = strings.Repeat("k", 1025) }, kubernetes: true},
		{name: "empty key", edit: func(s *rawKeySet) { s.Keys[0].DER = nil }, kubernetes: true},
		{name: "not PKIX", edit: func(s *rawKeySet) { s.Keys[0].DER = []byte("-----BEGIN PUBLIC KEY-----") }, kubernetes: true},

		{name: "refresh hint beyond 2^32 seconds", edit: func(s *rawKeySet) { s.RefreshHintSeconds = 1<<32 + 1 }},
		{name: "key ID twice", edit: func(s *rawKeySet) { s.Keys[1].KeyID = "a" }},
		{name: "key ID not UTF-8", edit: func(s *rawKeySet) { s.Keys[0].KeyID = "a\xff" }},
		{name: "Ed25519", edit: func(s *rawKeySet) { s.Keys[0].DER = der(t, ed25519.PublicKey(make([]byte, 32))) }},
		{name: "RSA below 2048 bits", edit: func(s *rawKeySet) { s.Keys[0].DER = der(t, key("rsa1024").Public()) }},
		{name: "every key excluded", edit: func(s *rawKeySet) { s.Keys[0].ExcludeFromDiscovery = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := good()
			tt.edit(&raw)
			_, err := parseKeySet(raw)
			require.Error(t, err)
			assert.Equal(t, tt.kubernetes, errors.Is(err, ErrKubernetes), err.Error())
			assert.Equal(t, !tt.kubernetes, errors.Is(err, ErrStrict), err.Error())
		})
	}

	// Every failure is reported.
	raw := good()
	raw.RefreshHintSeconds = 0
	raw.Keys[1].KeyID = "a"
	_, err = parseKeySet(raw)
	var list interface{ Unwrap() []error }
	require.True(t, errors.As(err, &list))
	assert.Len(t, list.Unwrap(), 2)
}

func TestCheckMetadata(t *testing.T) {
	d, err := checkMetadata(600)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, d)
	d, err = checkMetadata(1 << 32)
	require.NoError(t, err)
	assert.Equal(t, extsigner.MaxMaxTokenLifetime, d)
	assert.Equal(t, int64(600), minExpirationSeconds)

	for _, tt := range []struct {
		seconds    int64
		kubernetes bool
	}{{599, true}, {0, true}, {-1, true}, {1<<32 + 1, false}, {1 << 62, false}} {
		_, err := checkMetadata(tt.seconds)
		require.Error(t, err, "%d", tt.seconds)
		assert.Equal(t, tt.kubernetes, errors.Is(err, ErrKubernetes), "%d", tt.seconds)
		assert.Equal(t, !tt.kubernetes, errors.Is(err, ErrStrict), "%d", tt.seconds)
	}
}
