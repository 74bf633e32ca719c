package jwxkeys_test

import (
	"encoding/json"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
)

// TestToSetVerifies: ksa's keys as a jwx set verify a token minted with
// Kubernetes' bytes, with jws.Verify.
func TestToSetVerifies(t *testing.T) {
	f := newFixture(t)
	set, err := jwxkeys.ToSet(f.keys)
	require.NoError(t, err)
	assert.Equal(t, 2, set.Len())
	payload, err := jws.Verify([]byte(f.token), jws.WithKeySet(set))
	require.NoError(t, err)
	assert.Contains(t, string(payload), `"sub":"system:serviceaccount:prod:billing"`)

	// And back: the same keys.
	back, err := jwxkeys.FromSet(set, jwks.ParseOptions{})
	require.NoError(t, err)
	assert.Equal(t, f.keys, back.Keys)
}

// TestFromSetAudits: a jwx set is admitted only through ksa's public-only
// audit, where jwx's own PublicSetOf keeps what must not be published.
func TestFromSetAudits(t *testing.T) {
	f := newFixture(t)
	oct, err := jwk.Import([]byte("a shared secret of thirty-two by"))
	require.NoError(t, err)
	ecPriv, err := jwk.Import(f.ec)
	require.NoError(t, err)
	good, err := jwxkeys.ToSet(f.keys[:1])
	require.NoError(t, err)
	goodKey, _ := good.Key(0)
	enc, err := jwk.Import(f.rsa.Public())
	require.NoError(t, err)
	require.NoError(t, enc.Set(jwk.KeyUsageKey, "enc"))

	t.Run("a symmetric key jwx passes through", func(t *testing.T) {
		set := jwk.NewSet()
		require.NoError(t, set.AddKey(oct))
		// jwx v3.3 refuses it by default; earlier releases, and this
		// option, keep it in the "public" set.
		_, err := jwk.PublicSetOf(set)
		require.Error(t, err)
		public, err := jwk.PublicSetOf(set, jwk.WithAllowSymmetric(true))
		require.NoError(t, err)
		doc, err := json.Marshal(public)
		require.NoError(t, err)
		assert.Contains(t, string(doc), `"k":`, "jwx's public set still holds the secret")
		_, err = jwxkeys.FromSet(public, jwks.ParseOptions{})
		require.ErrorIs(t, err, jwks.ErrPrivateMaterial)
	})
	tests := []struct {
		name string
		keys []jwk.Key
		err  error
		// skipped is how many keys ParseSet skipped when the set passed.
		skipped int
	}{
		{name: "an EC private key beside a public one", keys: []jwk.Key{goodKey, ecPriv}, err: jwks.ErrPrivateMaterial},
		{name: "an oct key", keys: []jwk.Key{oct}, err: jwks.ErrPrivateMaterial},
		{name: "an encryption key is skipped", keys: []jwk.Key{goodKey, enc}, skipped: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := jwk.NewSet()
			for _, k := range tt.keys {
				require.NoError(t, set.AddKey(k))
			}
			got, err := jwxkeys.FromSet(set, jwks.ParseOptions{})
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got.Skipped, tt.skipped)
			assert.Len(t, got.Keys, len(tt.keys)-tt.skipped)
		})
	}
}

// FuzzFromSet: whatever set jwx parses, FromSet never panics and never
// returns a key set holding private or symmetric material.
func FuzzFromSet(f *testing.F) {
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRjGLenQbb3c4RBqtjkSVKFDp7Qg_sIWkq7fLQY"}]}`)
	f.Add(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","d":"jpsQnnGQmL-YBIffH1136cLyq7Z5BZR5P6U4CZ3pMCY","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRjGLenQbb3c4RBqtjkSVKFDp7Qg_sIWkq7fLQY"}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		set, err := jwk.Parse([]byte(doc))
		if err != nil {
			return
		}
		got, err := jwxkeys.FromSet(set, jwks.ParseOptions{})
		if err != nil {
			return
		}
		back, err := jwks.MarshalSet(got.Keys)
		if err != nil {
			t.Fatal(err)
		}
		if err := jwks.Audit(back); err != nil {
			t.Fatalf("FromSet returned keys that fail the audit: %v", err)
		}
	})
}
