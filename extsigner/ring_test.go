package extsigner_test

import (
	"crypto"
	"crypto/ecdsa"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
)

func primary(s crypto.Signer) extsigner.RingKey {
	return extsigner.RingKey{Signer: s, Role: extsigner.RolePrimary}
}

func TestNewRingDefaults(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	assert.Equal(t, extsigner.DefaultRefreshHint, ring.RefreshHint())
	assert.Equal(t, time.Minute, extsigner.DefaultRefreshHint)
	assert.Equal(t, extsigner.DefaultMaxTokenLifetime, ring.MaxTokenLifetime())
	assert.Equal(t, 24*time.Hour, extsigner.DefaultMaxTokenLifetime)
	assert.Equal(t, 2*extsigner.DefaultRefreshHint, ring.MinStaging(), "twice the refresh hint")
	assert.Equal(t, 24*time.Hour+2*time.Minute+time.Second, ring.RetireWait(), "lifetime, skew, leeway and a second")

	kid, err := jwks.KeyID(key("p256"))
	require.NoError(t, err)
	set := ring.KeySet()
	require.Len(t, set.Keys, 1)
	assert.Equal(t, kid, set.Keys[0].KeyID, "Kubernetes' key ID by default")
	assert.Equal(t, jwks.ES256, set.Keys[0].Algorithm)
	assert.Equal(t, clk.Now(), set.DataTimestamp, "the clock when made")
	assert.Equal(t, set.Keys[0], ring.Primary())

	keys := ring.Keys()
	require.Len(t, keys, 1)
	assert.Equal(t, extsigner.RolePrimary, keys[0].Role)
	assert.Equal(t, clk.Now(), keys[0].Published)
	assert.Equal(t, clk.Now(), keys[0].Since)
}

func TestNewRingConfig(t *testing.T) {
	ed := key("ed25519")
	p256 := key("p256")
	other := key("p256-other")
	tests := []struct {
		name    string
		cfg     extsigner.RingConfig
		wantErr error // nil: accepted
	}{
		{name: "refresh hint of one second", cfg: extsigner.RingConfig{RefreshHint: time.Second}},
		{name: "refresh hint below a second", cfg: extsigner.RingConfig{RefreshHint: 999 * time.Millisecond}, wantErr: ksa.ErrInvalidConfig},
		{name: "refresh hint not whole seconds", cfg: extsigner.RingConfig{RefreshHint: 1500 * time.Millisecond}, wantErr: ksa.ErrInvalidConfig},
		{name: "negative refresh hint", cfg: extsigner.RingConfig{RefreshHint: -time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "lifetime at the minimum", cfg: extsigner.RingConfig{MaxTokenLifetime: extsigner.MinMaxTokenLifetime}},
		{name: "lifetime below the minimum", cfg: extsigner.RingConfig{MaxTokenLifetime: extsigner.MinMaxTokenLifetime - time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "lifetime at the maximum", cfg: extsigner.RingConfig{MaxTokenLifetime: extsigner.MaxMaxTokenLifetime}},
		{name: "lifetime above the maximum", cfg: extsigner.RingConfig{MaxTokenLifetime: extsigner.MaxMaxTokenLifetime + time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "lifetime not whole seconds", cfg: extsigner.RingConfig{MaxTokenLifetime: time.Hour + time.Millisecond}, wantErr: ksa.ErrInvalidConfig},
		{name: "staging of one refresh hint", cfg: extsigner.RingConfig{MinStaging: time.Minute}},
		{name: "staging below the refresh hint", cfg: extsigner.RingConfig{MinStaging: time.Minute - time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "no keys", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{}}, wantErr: ksa.ErrInvalidConfig},
		{name: "no primary", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Role: extsigner.RoleStaged}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "two primaries", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), primary(other)}}, wantErr: ksa.ErrInvalidConfig},
		{name: "the same key twice", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Signer: p256, Role: extsigner.RoleStaged}}}, wantErr: extsigner.ErrDuplicateKeyID},
		{name: "no role", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Signer: other}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "primary without signer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Key: mustKey(t, p256.Public()), Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "staged without signer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Key: mustKey(t, other.Public()), Role: extsigner.RoleStaged}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "previous without signer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Key: mustKey(t, other.Public()), Role: extsigner.RolePrevious}}}},
		{name: "Ed25519, which kube-apiserver cannot use", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(ed)}}, wantErr: ksa.ErrInvalidConfig},
		{name: "RSA below 2048 bits", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(key("rsa1024"))}}, wantErr: jwks.ErrUnsupportedKey},
		{name: "P-224", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(key("p224"))}}, wantErr: jwks.ErrUnsupportedKey},
		{name: "PS256 on an RSA key", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: key("rsa2048"), Key: jwks.Key{Algorithm: jwks.PS256}, Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "public key of another signer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{Public: other.Public()}, Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "public key of the signer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{Public: p256.Public()}, Role: extsigner.RolePrimary}}}},
		{name: "nil signer pointer", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary((*ecdsa.PrivateKey)(nil))}}, wantErr: jwks.ErrUnsupportedKey},
		{name: "key ID of 1024 bytes", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{KeyID: strings.Repeat("k", extsigner.MaxKeyIDBytes)}, Role: extsigner.RolePrimary}}}},
		{name: "key ID of 1025 bytes", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{KeyID: strings.Repeat("k", extsigner.MaxKeyIDBytes+1)}, Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "key ID not UTF-8", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{KeyID: "k\xff"}, Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "excluded verify-only key", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Key: excluded(t, other.Public()), Role: extsigner.RoleVerifyOnly}}}},
		{name: "excluded previous key", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{primary(p256), {Signer: other, Key: jwks.Key{ExcludeFromDiscovery: true}, Role: extsigner.RolePrevious}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "excluded primary", cfg: extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: p256, Key: jwks.Key{ExcludeFromDiscovery: true}, Role: extsigner.RolePrimary}}}, wantErr: ksa.ErrInvalidConfig},
		{name: "MaxKeys keys", cfg: extsigner.RingConfig{Keys: verifyOnlyKeys(t, extsigner.MaxKeys-1)}},
		{name: "one key more than MaxKeys", cfg: extsigner.RingConfig{Keys: verifyOnlyKeys(t, extsigner.MaxKeys)}, wantErr: extsigner.ErrTooManyKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Keys == nil {
				tt.cfg.Keys = []extsigner.RingKey{primary(p256)}
			}
			ring, err := extsigner.NewRing(tt.cfg)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.NotNil(t, ring)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, ring)
			assert.True(t, strings.HasPrefix(err.Error(), "extsigner: "), err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "extsigner: "), "one prefix: %s", err)
		})
	}
}

func mustKey(t testing.TB, pub crypto.PublicKey) jwks.Key {
	t.Helper()
	k, err := jwks.NewKey(pub)
	require.NoError(t, err)
	return k
}

func excluded(t testing.TB, pub crypto.PublicKey) jwks.Key {
	k := mustKey(t, pub)
	k.ExcludeFromDiscovery = true
	return k
}

// verifyOnlyKeys is a primary and n verify-only keys with distinct IDs.
func verifyOnlyKeys(t testing.TB, n int) []extsigner.RingKey {
	keys := []extsigner.RingKey{primary(key("p256"))}
	pub := key("p256-other").Public()
	for i := range n {
		k := mustKey(t, pub)
		k.KeyID = fmt.Sprintf("verify-%d", i)
		keys = append(keys, extsigner.RingKey{Key: k, Role: extsigner.RoleVerifyOnly})
	}
	return keys
}

// TestRingRestore: a ring made from another ring's Keys and DataTimestamp
// publishes the same key set and signs with the same key.
func TestRingRestore(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	clk.Advance(time.Hour)
	_, err := ring.Stage(key("rsa2048"), "next")
	require.NoError(t, err)
	_, err = ring.AddVerifyOnly(excluded(t, key("p384").Public()))
	require.NoError(t, err)

	clk.Advance(time.Hour)
	restored, err := extsigner.NewRing(extsigner.RingConfig{Keys: ring.Keys(), DataTimestamp: ring.KeySet().DataTimestamp, Now: clk.Now})
	require.NoError(t, err)
	assert.Equal(t, ring.KeySet(), restored.KeySet())
	assert.Equal(t, ring.Keys(), restored.Keys())
	assert.Equal(t, ring.Primary(), restored.Primary())
}

func TestRoleString(t *testing.T) {
	for role, want := range map[extsigner.Role]string{
		extsigner.RoleStaged: "staged", extsigner.RolePrimary: "primary", extsigner.RolePrevious: "previous",
		extsigner.RoleVerifyOnly: "verify-only", 0: "Role(0)", 9: "Role(9)",
	} {
		assert.Equal(t, want, role.String())
	}
}
