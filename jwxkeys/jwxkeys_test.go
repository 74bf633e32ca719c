package jwxkeys_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
	"github.com/ksa-go/ksa/tokens"
)

var now = time.Unix(1700000000, 0)

type fixture struct {
	ec, attacker *ecdsa.PrivateKey
	rsa          *rsa.PrivateKey
	keys         []jwks.Key
	token        string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	var f fixture
	var err error
	f.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	f.attacker, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	f.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for _, pub := range []any{f.ec.Public(), f.rsa.Public()} {
		k, err := jwks.NewKey(pub)
		require.NoError(t, err)
		f.keys = append(f.keys, k)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: f.ec, Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := minter.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u"}, Audiences: []string{"vault"}})
	require.NoError(t, err)
	f.token = tok.Raw
	return f
}

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

// TestKeyProvider: jws.Verify with ksa's key source through the provider
// accepts the genuine token and refuses forgeries with the sentinel ksa's
// validator gives them.
func TestKeyProvider(t *testing.T) {
	f := newFixture(t)
	src, err := jwks.NewStaticSource(f.keys...)
	require.NoError(t, err)
	p, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: src})
	require.NoError(t, err)
	_, err = jws.Verify([]byte(f.token), jws.WithKeyProvider(p))
	require.NoError(t, err)

	payload := []byte(`{"iss":"https://issuer.example","aud":["vault"]}`)
	forge := func(alg jwa.SignatureAlgorithm, key any, kid string) string {
		hdr := jws.NewHeaders()
		if kid != "" {
			require.NoError(t, hdr.Set(jws.KeyIDKey, kid))
		}
		out, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
		require.NoError(t, err)
		return string(out)
	}
	tests := []struct {
		name  string
		token string
		err   error
	}{
		{name: "unknown kid", token: forge(jwa.ES256(), f.attacker, "nope"), err: tokens.ErrUnknownKeyID},
		{name: "another key under the real kid", token: forge(jwa.ES256(), f.attacker, f.keys[0].KeyID), err: jws.VerifyError()},
		{name: "RS256 on the EC key's kid", token: forge(jwa.RS256(), f.rsa, f.keys[0].KeyID), err: tokens.ErrAlgorithmNotAllowed},
		{name: "HS256 keyed with anything", token: forge(jwa.HS256(), []byte("0123456789abcdef0123456789abcdef"), f.keys[0].KeyID), err: tokens.ErrAlgorithmNotAllowed},
		{name: "tampered payload", token: tamper(f.token), err: jws.VerifyError()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jws.Verify([]byte(tt.token), jws.WithKeyProvider(p))
			require.ErrorIs(t, err, tt.err)
		})
	}
}

func tamper(token string) string {
	parts := strings.Split(token, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	return strings.Join(parts, ".")
}

func TestNewKeyProviderRefuses(t *testing.T) {
	src, err := jwks.NewStaticSource()
	require.NoError(t, err)
	for _, cfg := range []jwxkeys.Config{{AllowedAlgorithms: []string{"HS256"}}, {MaxKeysPerToken: -1}} {
		cfg.Keys = src
		_, err := jwxkeys.NewKeyProvider(cfg)
		require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
	_, err = jwxkeys.NewKeyProvider(jwxkeys.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
