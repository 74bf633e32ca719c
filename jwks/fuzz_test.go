package jwks_test

import (
	"crypto"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
)

// fuzzSeeds are real and hostile key set documents.
func fuzzSeeds(f *testing.F) {
	for _, tt := range auditCases(f) {
		f.Add([]byte(tt.doc))
	}
	for _, doc := range []string{
		set(with(rsaJWK, `"alg":"PS256"`, `"use":"sig"`, `"key_ops":["verify"]`, `"kid":"k"`)),
		set(with(okpJWK, `"alg":"Ed25519"`)),
		set(rsaWith(k8sRSAN, "AQAA"), rsaWith(k8sRSAN, "_____w"), rsaWith(k8sRSAN+"==", "AQAB")),
		set(ecWith("P-384", k8sECX, k8sECY), ecWith("P-256", k8sECX, k8sECX)),
		set(okpWith("X25519", rfc8037X), `{"kty":"OKP","crv":"Ed25519","x":"`+rfc8037X+`","d":"`+rfc8037D+`"}`),
		set(with(ecJWK, `"key_ops":"verify"`), with(ecJWK, `"use":"enc"`), with(ecJWK, `"alg":"none"`)),
		`{"keys":[{"kty":"RSA","n":"` + k8sRSAN[:64] + `\n` + k8sRSAN[64:] + `","e":"AQAB"}]}`,
		`{"keys":[` + strings.Repeat(ecJWK+",", 5) + ecJWK + `]}`,
		`{"keys":[{"\u0064":"x","kty":"EC"},{"\u004b":"x","kty":"oct"},{"\u212a":"x"}]}`,
		`{"keys":[],"Keys":[{"d":"x"}]}`,
	} {
		f.Add([]byte(doc))
	}
}

// privateIndexesJSON returns the positions of the key objects that
// encoding/json sees as holding a private member (in any case), under any
// top-level member encoding/json would take for "keys", or ok=false when
// encoding/json does not read doc.
func privateIndexesJSON(doc []byte) (idx map[int]bool, ok bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return nil, false
	}
	idx = map[int]bool{}
	for name, raw := range top {
		if !strings.EqualFold(name, "keys") {
			continue
		}
		var keys []json.RawMessage
		if json.Unmarshal(raw, &keys) != nil {
			continue
		}
		for i, k := range keys {
			var obj map[string]json.RawMessage
			if json.Unmarshal(k, &obj) != nil {
				continue
			}
			for member := range obj {
				if isPrivateName(member) {
					idx[i] = true
				}
			}
		}
	}
	return idx, true
}

func requireKind(t *testing.T, me *jwks.MemberError) {
	t.Helper()
	switch me.Kind {
	case jwks.ErrPrivateMaterial, jwks.ErrUnknownKeyType, jwks.ErrUnsupportedKey:
	default:
		t.Fatalf("MemberError kind %v", me.Kind)
	}
	require.ErrorIs(t, me, me.Kind)
	if me.Index < 0 {
		// Audit's finding outside the keys: private material with a path.
		require.Equal(t, -1, me.Index)
		require.Equal(t, jwks.ErrPrivateMaterial, me.Kind)
		require.NotEmpty(t, me.Path)
	}
}

// FuzzParseSet: ParseSet never panics; every key it returns is a checked
// public key fitting its algorithm, taken from a key object Audit does not
// flag, and survives MarshalSet and ParseSet again unchanged.
func FuzzParseSet(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := jwks.ParseSet(doc, jwks.ParseOptions{})
		auditErr := jwks.Audit(doc)
		if err != nil {
			kind := jwks.ErrSetTooLarge
			if errors.Is(err, jwks.ErrMalformedSet) {
				kind = jwks.ErrMalformedSet
			}
			requireSetError(t, err, kind)
			require.Nil(t, s)
			if kind == jwks.ErrMalformedSet {
				require.ErrorIs(t, auditErr, jwks.ErrMalformedSet, "Audit accepts a set ParseSet finds malformed")
			}
			return
		}
		require.NotErrorIs(t, auditErr, jwks.ErrMalformedSet, "Audit finds malformed a set ParseSet accepts")

		// Positions: the skipped keys say theirs; the others are the
		// returned keys, in order.
		total := len(s.Keys) + len(s.Skipped)
		skipped := map[int]bool{}
		for _, me := range s.Skipped {
			requireKind(t, me)
			require.Less(t, me.Index, total)
			require.False(t, skipped[me.Index], "key #%d skipped twice", me.Index)
			skipped[me.Index] = true
		}
		for _, k := range s.Keys {
			require.NoError(t, jwks.CheckPublicKey(k.Public))
			require.True(t, jwks.Fits(k.Algorithm, k.Public), "alg %q on %T", k.Algorithm, k.Public)
			require.False(t, k.ExcludeFromDiscovery)
		}

		// Whatever Audit flags, ParseSet skipped.
		if auditErr != nil {
			for _, me := range memberErrors(t, auditErr) {
				requireKind(t, me)
				if me.Index >= 0 {
					require.True(t, skipped[me.Index], "ParseSet returned key #%d, which Audit flags: %v", me.Index, me)
				}
			}
		}
		if idx, ok := privateIndexesJSON(doc); ok {
			for i := range idx {
				require.True(t, skipped[i], "ParseSet returned key #%d, which holds a private member", i)
				require.ErrorIs(t, auditErr, jwks.ErrPrivateMaterial)
			}
		}

		// Round trip.
		out, err := jwks.MarshalSet(s.Keys)
		require.NoError(t, err)
		require.NoError(t, jwks.Audit(out))
		back, err := jwks.ParseSet(out, jwks.ParseOptions{MaxBytes: 1 << 30})
		require.NoError(t, err)
		require.Empty(t, back.Skipped)
		require.Len(t, back.Keys, len(s.Keys))
		for i, k := range s.Keys {
			require.Equal(t, k.KeyID, back.Keys[i].KeyID)
			require.Equal(t, k.Algorithm, back.Keys[i].Algorithm)
			require.True(t, k.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(back.Keys[i].Public))
		}
	})
}

// FuzzAudit: Audit never panics, never accepts a document in which
// encoding/json finds a private member, and agrees with ParseSet: the
// documents it refuses as a whole ParseSet refuses, and the keys it flags
// ParseSet skips.
func FuzzAudit(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := jwks.Audit(doc)
		if idx, ok := privateIndexesJSON(doc); ok && len(idx) > 0 {
			require.Error(t, err, "Audit accepts a private member")
			if !errors.Is(err, jwks.ErrMalformedSet) {
				require.ErrorIs(t, err, jwks.ErrPrivateMaterial)
			}
		}
		s, perr := jwks.ParseSet(doc, jwks.ParseOptions{MaxBytes: len(doc) + 1, MaxKeys: 1 << 30})
		if errors.Is(err, jwks.ErrMalformedSet) {
			requireSetError(t, err, jwks.ErrMalformedSet) // a set error comes alone
			require.ErrorIs(t, perr, jwks.ErrMalformedSet)
			return
		}
		require.NoError(t, perr)
		skipped := map[int]*jwks.MemberError{}
		for _, me := range s.Skipped {
			skipped[me.Index] = me
		}
		if err == nil {
			for _, me := range s.Skipped {
				require.NotErrorIs(t, me, jwks.ErrPrivateMaterial)
				require.NotErrorIs(t, me, jwks.ErrUnknownKeyType)
			}
			return
		}
		for _, me := range memberErrors(t, err) {
			requireKind(t, me)
			if me.Index < 0 {
				continue // outside the keys: nothing for ParseSet to skip
			}
			require.Contains(t, skipped, me.Index, "Audit flags key #%d, ParseSet takes it", me.Index)
			if me.Kind == jwks.ErrPrivateMaterial {
				require.ErrorIs(t, skipped[me.Index], jwks.ErrPrivateMaterial)
			}
		}
	})
}
