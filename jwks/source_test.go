package jwks_test

import (
	"crypto"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

var _ jwks.KeySource = (*jwks.StaticSource)(nil)

// TestStaticSourceKubernetes follows Kubernetes' StaticPublicKeysGetter
// tests (k8s.io/kubernetes/pkg/serviceaccount): no keys gives an empty list,
// keys are kept in order and found by kid, a private key is stored as its
// public half, a value that is not a key is refused, and an unknown kid
// finds nothing.
func TestStaticSourceKubernetes(t *testing.T) {
	ecPub := testkeys.K8sEC().Public()
	rsaPub := testkeys.K8sRSA().Public()
	tests := []struct {
		name     string
		keys     []crypto.PublicKey
		wantIDs  []string
		wantKeys []crypto.PublicKey
	}{
		// 4: no keys gives an empty, non-nil list.
		{name: "nil", keys: nil, wantIDs: []string{}, wantKeys: []crypto.PublicKey{}},
		// 5: keys in input order with Kubernetes' kids.
		{name: "ec and rsa", keys: []crypto.PublicKey{ecPub, rsaPub},
			wantIDs: []string{testkeys.K8sECKeyID, testkeys.K8sRSAKeyID}, wantKeys: []crypto.PublicKey{ecPub, rsaPub}},
		{name: "rsa and ec", keys: []crypto.PublicKey{rsaPub, ecPub},
			wantIDs: []string{testkeys.K8sRSAKeyID, testkeys.K8sECKeyID}, wantKeys: []crypto.PublicKey{rsaPub, ecPub}},
		// 6: a private key is stored as its public key.
		{name: "ec private key", keys: []crypto.PublicKey{testkeys.K8sEC()},
			wantIDs: []string{testkeys.K8sECKeyID}, wantKeys: []crypto.PublicKey{ecPub}},
		{name: "rsa signer", keys: []crypto.PublicKey{signerOnly{testkeys.K8sRSA()}},
			wantIDs: []string{testkeys.K8sRSAKeyID}, wantKeys: []crypto.PublicKey{rsaPub}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := newKeys(tt.keys...)
			require.NoError(t, err)
			src, err := jwks.NewStaticSource(keys...)
			require.NoError(t, err)
			all, err := src.Keys(t.Context(), "")
			require.NoError(t, err)
			require.NotNil(t, all)
			ids := []string{}
			pubs := []crypto.PublicKey{}
			for _, k := range all {
				ids = append(ids, k.KeyID)
				pubs = append(pubs, k.Public)
				assert.IsType(t, tt.wantKeys[len(pubs)-1], k.Public, "public key only")
			}
			assert.Equal(t, tt.wantIDs, ids)
			for i, w := range tt.wantKeys {
				assert.True(t, w.(interface{ Equal(crypto.PublicKey) bool }).Equal(pubs[i]))
			}
			assert.Equal(t, all, src.All())

			// 5: a lookup by kid returns exactly that key.
			for i, id := range tt.wantIDs {
				got, err := src.Keys(t.Context(), id)
				require.NoError(t, err)
				require.Len(t, got, 1)
				assert.Equal(t, all[i], got[0])
			}
			// 8: an unknown kid gives no keys and no error.
			for _, kid := range []string{"bogus", "bogus" + testkeys.K8sRSAKeyID, testkeys.K8sRSAThumbprint} {
				got, err := src.Keys(t.Context(), kid)
				require.NoError(t, err)
				assert.Empty(t, got)
			}
		})
	}
}

// TestStaticSourceBogus: 7, a value that is not a key fails construction.
func TestStaticSourceBogus(t *testing.T) {
	for _, key := range []crypto.PublicKey{
		"bogus",
		nil,
		testkeys.Generated("p224"),
		testkeys.Generated("rsa1024").Public(),
		jwks.Key{Public: testkeys.K8sRSA().Public()},
	} {
		_, err := jwks.NewKey(key)
		requireUnsupported(t, err, "")
	}
	src, err := jwks.NewStaticSource(jwks.Key{Public: testkeys.K8sRSA().Public()})
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	assert.Nil(t, src)
}

func TestStaticSourceKeys(t *testing.T) {
	rsaKey := mustKey(t, testkeys.K8sRSA())
	hidden, err := jwks.NewKeyWithID(testkeys.K8sOtherRSAPublic(), "verify-only")
	require.NoError(t, err)
	hidden.ExcludeFromDiscovery = true
	src, err := jwks.NewStaticSource(rsaKey, mustKey(t, testkeys.K8sEC()), mustKey(t, rsaKey.Public), hidden)
	require.NoError(t, err)

	all, err := src.Keys(t.Context(), "")
	require.NoError(t, err)
	require.Len(t, all, 4)

	// Duplicates are kept, in order, and both returned for their kid.
	dups, err := src.Keys(t.Context(), testkeys.K8sRSAKeyID)
	require.NoError(t, err)
	assert.Equal(t, []jwks.Key{rsaKey, rsaKey}, dups)

	// A Key keeps its own ID and flag.
	got, err := src.Keys(t.Context(), "verify-only")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, got[0].ExcludeFromDiscovery)
	assert.Equal(t, hidden, got[0])

	// Appending to a result does not write into the source's storage.
	_ = append(dups, jwks.Key{KeyID: "intruder"})
	_ = append(all, jwks.Key{KeyID: "intruder"})
	again, err := src.Keys(t.Context(), "")
	require.NoError(t, err)
	assert.Equal(t, all, again)
	assert.Equal(t, 2, cap(dups), "result is a full slice")
	assert.Equal(t, 4, cap(all), "result is a full slice")
}

// TestStaticSourceConcurrent reads a source from many goroutines; run with
// -race.
func TestStaticSourceConcurrent(t *testing.T) {
	// Three keys with one kid: appending them one by one leaves spare
	// capacity that a caller's append would write into.
	keys, err := newKeys(testkeys.K8sRSA(), testkeys.K8sEC(), testkeys.K8sOtherRSAPublic(), testkeys.K8sRSA(), testkeys.K8sRSA())
	require.NoError(t, err)
	src, err := jwks.NewStaticSource(keys...)
	require.NoError(t, err)
	kids := []string{"", testkeys.K8sRSAKeyID, testkeys.K8sECKeyID, "unknown"}
	want := map[string]int{"": 5, testkeys.K8sRSAKeyID: 3, testkeys.K8sECKeyID: 1, "unknown": 0}

	const goroutines = 16
	counts := make([][]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range 200 {
				kid := kids[(g+i)%len(kids)]
				keys, err := src.Keys(t.Context(), kid)
				if err != nil {
					counts[g] = append(counts[g], -1)
					continue
				}
				// Callers appending must not race with each other.
				keys = append(keys, jwks.Key{KeyID: "local"})
				counts[g] = append(counts[g], len(keys)-1)
				_ = src.All()
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		for i, n := range counts[g] {
			assert.Equal(t, want[kids[(g+i)%len(kids)]], n)
		}
	}
}
