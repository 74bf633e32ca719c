package tokens_test

import (
	"context"
	"crypto/rsa"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// keysFunc is a jwks.KeySource answering as the function does.
type keysFunc func(ctx context.Context, kid string) ([]jwks.Key, error)

func (f keysFunc) Keys(ctx context.Context, kid string) ([]jwks.Key, error) { return f(ctx, kid) }

// TestKeySelectorSelect: each rule of the selection, with the error the
// validator refuses such a token with when no key may check it.
func TestKeySelectorSelect(t *testing.T) {
	rsaKey, err := jwks.NewKeyWithID(testkeys.K8sRSA().Public(), "k")
	require.NoError(t, err)
	ecKey, err := jwks.NewKeyWithID(testkeys.K8sEC().Public(), "k")
	require.NoError(t, err)
	other, err := jwks.NewKeyWithID(testkeys.K8sOtherRSAPublic(), "other")
	require.NoError(t, err)
	rsaPS := rsaKey
	rsaPS.Algorithm = jwks.PS256
	fakes := hostileRSAKeys(t, 4, 2048, "k")
	// A modulus over the bounds: NewKey refuses it, a custom source may
	// hand it over.
	wide := new(big.Int).Lsh(hostileRSAKeys(t, 1, jwks.MaxRSABits, "k")[0].Public.(*rsa.PublicKey).N, 8)
	huge := jwks.Key{KeyID: "k", Public: &rsa.PublicKey{N: wide.SetBit(wide, 0, 1), E: 65537}, Algorithm: jwks.RS256}
	failed := &jwks.FetchError{URL: "https://issuer.example/jwks", Status: 503, Reason: "unexpected status 503"}

	tests := []struct {
		name    string
		config  tokens.KeySelectorConfig
		keys    []jwks.Key
		srcErr  error
		kid     string
		alg     string
		want    []jwks.Key
		wantErr []error
	}{
		{name: "the kid's keys of the algorithm", keys: []jwks.Key{rsaKey, other, ecKey}, kid: "k", alg: jwks.RS256, want: []jwks.Key{rsaKey}},
		{name: "no kid: every key", keys: []jwks.Key{rsaKey, other}, alg: jwks.RS256, want: []jwks.Key{rsaKey, other}},
		{name: "a source ignoring the kid does not widen the search", keys: []jwks.Key{other}, kid: "k", alg: jwks.RS256,
			wantErr: []error{tokens.ErrUnknownKeyID}},
		{name: "no keys at all", alg: jwks.RS256, wantErr: []error{jwks.ErrNoKeys}},
		{name: "none or HMAC never", keys: []jwks.Key{rsaKey}, kid: "k", alg: "HS256", wantErr: []error{tokens.ErrAlgorithmNotAllowed}},
		{name: "an algorithm the key does not declare", keys: []jwks.Key{rsaKey}, kid: "k", alg: jwks.PS256, wantErr: []error{tokens.ErrAlgorithmNotAllowed}},
		{name: "an allowed algorithm that fits", config: tokens.KeySelectorConfig{AllowedAlgorithms: []string{jwks.PS256}},
			keys: []jwks.Key{rsaKey, ecKey}, kid: "k", alg: jwks.PS256, want: []jwks.Key{rsaKey}},
		{name: "a key listed twice counts once", keys: []jwks.Key{rsaKey, rsaKey, ecKey}, kid: "k", alg: jwks.RS256, want: []jwks.Key{rsaKey}},
		{name: "the same key with two algorithms counts twice", config: tokens.KeySelectorConfig{AllowedAlgorithms: []string{jwks.PS256}},
			keys: []jwks.Key{rsaKey, rsaPS}, kid: "k", alg: jwks.PS256, want: []jwks.Key{rsaKey, rsaPS}},
		{name: "at most MaxKeysPerToken, by default three", keys: fakes, kid: "k", alg: jwks.RS256, want: fakes[:tokens.DefaultMaxKeysPerToken]},
		{name: "refused keys count against the bound", keys: []jwks.Key{ecKey, fakes[0], fakes[1], rsaKey}, config: tokens.KeySelectorConfig{MaxKeysPerToken: 1},
			kid: "k", alg: jwks.RS256, wantErr: []error{tokens.ErrAlgorithmNotAllowed, tokens.ErrTooManyKeys}},
		{name: "an RSA key over the bounds", keys: []jwks.Key{huge}, kid: "k", alg: jwks.RS256, wantErr: []error{tokens.ErrBadSignature, jwks.ErrUnsupportedKey}},
		{name: "the source failed", srcErr: failed, kid: "k", alg: jwks.RS256, wantErr: []error{tokens.ErrKeySource, jwks.ErrFetch}},
		{name: "an unknown kid the source may not look for yet", srcErr: &jwks.RateLimitError{KeyID: "k", Last: failed}, kid: "k", alg: jwks.RS256,
			wantErr: []error{tokens.ErrUnknownKeyID, jwks.ErrRateLimited}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tokens.NewKeySelector(tt.config)
			require.NoError(t, err)
			src := keysFunc(func(context.Context, string) ([]jwks.Key, error) { return tt.keys, tt.srcErr })
			got, err := s.Select(t.Context(), src, tt.kid, tt.alg)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			assert.Nil(t, got)
			for _, want := range tt.wantErr {
				require.ErrorIs(t, err, want)
			}
			assert.Equal(t, tt.wantErr[0], tokens.Reason(err), "the reason")
		})
	}
}

func TestNewKeySelectorRefuses(t *testing.T) {
	for _, cfg := range []tokens.KeySelectorConfig{
		{AllowedAlgorithms: []string{"HS256"}},
		{AllowedAlgorithms: []string{"none"}},
		{MaxKeysPerToken: -1},
	} {
		_, err := tokens.NewKeySelector(cfg)
		require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
}
