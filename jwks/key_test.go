package jwks_test

import (
	"crypto"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

func TestNewKey(t *testing.T) {
	rsaPub := testkeys.K8sRSA().Public()
	tests := []struct {
		name    string
		in      any
		want    jwks.Key
		wantErr error
	}{
		{name: "RSA private key", in: testkeys.K8sRSA(), want: jwks.Key{KeyID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "RSA public key", in: rsaPub, want: jwks.Key{KeyID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "RSA signer", in: signerOnly{testkeys.K8sRSA()}, want: jwks.Key{KeyID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "EC private key", in: testkeys.K8sEC(), want: jwks.Key{KeyID: testkeys.K8sECKeyID, Public: testkeys.K8sEC().Public(), Algorithm: jwks.ES256}},
		{name: "Key keeps ID, algorithm and flag", in: jwks.Key{KeyID: "mine", Public: rsaPub, Algorithm: jwks.PS256, ExcludeFromDiscovery: true},
			want: jwks.Key{KeyID: "mine", Public: rsaPub, Algorithm: jwks.PS256, ExcludeFromDiscovery: true}},
		{name: "Key without algorithm gets the default", in: jwks.Key{KeyID: "mine", Public: testkeys.Generated("p384").Public()},
			want: jwks.Key{KeyID: "mine", Public: testkeys.Generated("p384").Public(), Algorithm: jwks.ES384}},

		{name: "nil", in: nil, wantErr: jwks.ErrUnsupportedKey},
		{name: "string", in: "bogus", wantErr: jwks.ErrUnsupportedKey},
		{name: "P-224", in: testkeys.Generated("p224"), wantErr: jwks.ErrUnsupportedKey},
		{name: "RSA 1024", in: testkeys.Generated("rsa1024"), wantErr: jwks.ErrUnsupportedKey},
		{name: "Key without ID", in: jwks.Key{Public: rsaPub}, wantErr: jwks.ErrUnsupportedKey},
		{name: "Key holding a private key", in: jwks.Key{KeyID: "x", Public: testkeys.K8sRSA()}, wantErr: jwks.ErrUnsupportedKey},
		{name: "Key with an algorithm that does not fit", in: jwks.Key{KeyID: "x", Public: rsaPub, Algorithm: jwks.ES256}, wantErr: jwks.ErrUnsupportedKey},
		{name: "pointer to Key", in: &jwks.Key{KeyID: "x", Public: rsaPub}, wantErr: jwks.ErrUnsupportedKey},
		{name: "Key given to NewKey", in: []jwks.Key{{KeyID: "x", Public: rsaPub}}[0:1], wantErr: jwks.ErrUnsupportedKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A Key is checked with Key.Check; anything else goes through
			// NewKey, which takes only keys.
			var got jwks.Key
			var err error
			if k, ok := tt.in.(jwks.Key); ok {
				got, err = k.Check()
			} else {
				got, err = jwks.NewKey(tt.in)
			}
			if tt.wantErr != nil {
				requireUnsupported(t, err, "")
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, jwks.Key{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.KeyID, got.KeyID)
			assert.Equal(t, tt.want.Algorithm, got.Algorithm)
			assert.Equal(t, tt.want.ExcludeFromDiscovery, got.ExcludeFromDiscovery)
			assert.IsType(t, tt.want.Public, got.Public)
			assert.True(t, tt.want.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(got.Public))
		})
	}
}

func TestNewKeyWithID(t *testing.T) {
	k, err := jwks.NewKeyWithID(testkeys.K8sRSA(), testkeys.K8sRSAThumbprint)
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sRSAThumbprint, k.KeyID)
	assert.Equal(t, jwks.RS256, k.Algorithm)
	assert.IsType(t, testkeys.K8sRSA().Public(), k.Public)

	k, err = jwks.NewKeyWithID(testkeys.K8sEC().Public(), "new")
	require.NoError(t, err)
	assert.Equal(t, "new", k.KeyID)

	_, err = jwks.NewKeyWithID(jwks.Key{KeyID: "old", Public: testkeys.K8sEC().Public()}, "new")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey, "a Key is not a key")

	_, err = jwks.NewKeyWithID(testkeys.K8sRSA(), "")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	_, err = jwks.NewKeyWithID(testkeys.Generated("p224"), "id")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
}

func TestNewStaticSourceChecksKeys(t *testing.T) {
	ec, err := jwks.NewKey(testkeys.K8sEC())
	require.NoError(t, err)
	src, err := jwks.NewStaticSource()
	require.NoError(t, err)
	assert.Empty(t, src.All())

	for _, tc := range []struct {
		name   string
		bad    jwks.Key
		reason string
	}{
		{name: "no key ID", bad: jwks.Key{Public: testkeys.K8sRSA().Public()}},
		{name: "private key", bad: jwks.Key{KeyID: "k", Public: testkeys.K8sRSA()}},
		{name: "algorithm of another key type", bad: jwks.Key{KeyID: "k", Public: testkeys.K8sRSA().Public(), Algorithm: jwks.ES256}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := jwks.NewStaticSource(ec, tc.bad)
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
			var me *jwks.MemberError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, 1, me.Index)
			requireUnsupported(t, err, "")
			assert.Nil(t, src)
		})
	}

	// A hand-built key without an algorithm gets its type's default.
	src, err = jwks.NewStaticSource(jwks.Key{KeyID: "k", Public: testkeys.K8sRSA().Public()})
	require.NoError(t, err)
	assert.Equal(t, jwks.RS256, src.All()[0].Algorithm)
}
