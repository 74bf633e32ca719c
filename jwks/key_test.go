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
		{name: "RSA private key", in: testkeys.K8sRSA(), want: jwks.Key{ID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "RSA public key", in: rsaPub, want: jwks.Key{ID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "RSA signer", in: signerOnly{testkeys.K8sRSA()}, want: jwks.Key{ID: testkeys.K8sRSAKeyID, Public: rsaPub, Algorithm: jwks.RS256}},
		{name: "EC private key", in: testkeys.K8sEC(), want: jwks.Key{ID: testkeys.K8sECKeyID, Public: testkeys.K8sEC().Public(), Algorithm: jwks.ES256}},
		{name: "Key keeps ID, algorithm and flag", in: jwks.Key{ID: "mine", Public: rsaPub, Algorithm: jwks.PS256, ExcludeFromDiscovery: true},
			want: jwks.Key{ID: "mine", Public: rsaPub, Algorithm: jwks.PS256, ExcludeFromDiscovery: true}},
		{name: "Key without algorithm gets the default", in: jwks.Key{ID: "mine", Public: testkeys.Generated("p384").Public()},
			want: jwks.Key{ID: "mine", Public: testkeys.Generated("p384").Public(), Algorithm: jwks.ES384}},

		{name: "nil", in: nil, wantErr: jwks.ErrUnsupportedKey},
		{name: "string", in: "bogus", wantErr: jwks.ErrUnsupportedKey},
		{name: "P-224", in: testkeys.Generated("p224"), wantErr: jwks.ErrUnsupportedKey},
		{name: "RSA 1024", in: testkeys.Generated("rsa1024"), wantErr: jwks.ErrUnsupportedKey},
		{name: "Key without ID", in: jwks.Key{Public: rsaPub}, wantErr: jwks.ErrUnsupportedKey},
		{name: "Key holding a private key", in: jwks.Key{ID: "x", Public: testkeys.K8sRSA()}, wantErr: jwks.ErrUnsupportedKey},
		{name: "Key with an algorithm that does not fit", in: jwks.Key{ID: "x", Public: rsaPub, Algorithm: jwks.ES256}, wantErr: jwks.ErrUnsupportedKey},
		{name: "pointer to Key", in: &jwks.Key{ID: "x", Public: rsaPub}, wantErr: jwks.ErrUnsupportedKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.NewKey(tt.in)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var kte *jwks.KeyTypeError
				require.ErrorAs(t, err, &kte)
				assert.Equal(t, jwks.Key{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.ID, got.ID)
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
	assert.Equal(t, testkeys.K8sRSAThumbprint, k.ID)
	assert.Equal(t, jwks.RS256, k.Algorithm)
	assert.IsType(t, testkeys.K8sRSA().Public(), k.Public)

	k, err = jwks.NewKeyWithID(jwks.Key{ID: "old", Public: testkeys.K8sEC().Public()}, "new")
	require.NoError(t, err)
	assert.Equal(t, "new", k.ID)

	_, err = jwks.NewKeyWithID(testkeys.K8sRSA(), "")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	_, err = jwks.NewKeyWithID(testkeys.Generated("p224"), "id")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
}

func TestKeys(t *testing.T) {
	keys, err := jwks.Keys(testkeys.K8sEC(), testkeys.K8sRSA().Public())
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, testkeys.K8sECKeyID, keys[0].ID)
	assert.Equal(t, testkeys.K8sRSAKeyID, keys[1].ID)

	keys, err = jwks.Keys()
	require.NoError(t, err)
	assert.NotNil(t, keys)
	assert.Empty(t, keys)

	keys, err = jwks.Keys(testkeys.K8sEC(), "bogus")
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	var kte *jwks.KeyTypeError
	require.ErrorAs(t, err, &kte)
	assert.Equal(t, "string", kte.Type)
	assert.Nil(t, keys)
}
