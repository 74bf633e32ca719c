package jwks_test

import (
	"crypto"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
)

// k8sJWKS is the key set kube-apiserver serves for Kubernetes' RSA and EC
// test public keys, as the OIDC metadata tests of
// k8s.io/kubernetes/pkg/serviceaccount expect it.
const k8sJWKS = `{"keys":[{"use":"sig","kty":"RSA","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU","alg":"RS256","n":"249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw","e":"AQAB"},{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}`

// Members of Kubernetes' test keys, for building key objects by hand.
const (
	k8sRSAN = "249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw"
	k8sECX  = "H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI"
	k8sECY  = "BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"
	// rfc8037X is the Ed25519 public key of RFC 8037 appendix A.2.
	rfc8037X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	// rfc8037D is its private key (appendix A.1).
	rfc8037D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
)

// Key objects of each type, to put in documents.
const (
	rsaJWK = `{"kty":"RSA","n":"` + k8sRSAN + `","e":"AQAB"}`
	ecJWK  = `{"kty":"EC","crv":"P-256","x":"` + k8sECX + `","y":"` + k8sECY + `"}`
	okpJWK = `{"kty":"OKP","crv":"Ed25519","x":"` + rfc8037X + `"}`
)

// rfc7638N is the RSA modulus of RFC 7638 §3.1 (and RFC 7517 appendix A.1);
// its thumbprint is rfc7638Thumbprint.
const (
	rfc7638N          = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	rfc7638Thumbprint = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
)

// rfc7517A1 is the public key set of RFC 7517 appendix A.1: a P-256 key
// for encryption and an RSA key for RS256.
const rfc7517A1 = `{"keys":
  [
    {"kty":"EC",
     "crv":"P-256",
     "x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4",
     "y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM",
     "use":"enc",
     "kid":"1"},

    {"kty":"RSA",
     "n": "` + rfc7638N + `",
     "e":"AQAB",
     "alg":"RS256",
     "kid":"2011-04-29"}
  ]
}`

// rfc7517A2EC is the P-256 private key of RFC 7517 appendix A.2.
const rfc7517A2EC = `{"keys":[{"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM","d":"870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE","use":"enc","kid":"1"}]}`

// The signature keys of RFC 7520 §3.1 (P-521) and §3.3 (RSA), with their
// RFC 7638 thumbprints as go-jose computes them (jwk_test.go,
// cookbookJWKThumbprints).
const (
	rfc7520EC           = `{"kty":"EC","kid":"bilbo.baggins@hobbiton.example","use":"sig","crv":"P-521","x":"AHKZLLOsCOzz5cY97ewNUajB957y-C-U88c3v13nmGZx6sYl_oJXu9A5RkTKqjqvjyekWF-7ytDyRXYgCF5cj0Kt","y":"AdymlHvOiLxXkEhayXQnNCvDX4h9htZaCJN34kfmC6pV5OhQHiraVySsUdaQkAgDPrwQrJmbnX9cwlGfP-HqHZR1"}`
	rfc7520ECThumbprint = "dHri3SADZkrush5HU_50AoRhcKFryN-PI6jPBtPL55M"
	// rfc7520ECD is the private scalar of the same key.
	rfc7520ECD           = "AAhRON2r9cqXX1hg-RoI6R1tX5p2rUAYdmpHZoC1XNM56KtscrX6zbKipQrCW9CGZH3T4ubpnoTKLDYJ_fF3_rJt"
	rfc7520RSA           = `{"kty":"RSA","kid":"bilbo.baggins@hobbiton.example","use":"sig","n":"n4EPtAOCc9AlkeQHPzHStgAbgs7bTZLwUBZdR8_KuKPEHLd4rHVTeT-O-XV2jRojdNhxJWTDvNd7nqQ0VEiZQHz_AJmSCpMaJMRBSFKrKb2wqVwGU_NsYOYL-QtiWN2lbzcEe6XC0dApr5ydQLrHqkHHig3RBordaZ6Aj-oBHqFEHYpPe7Tpe-OfVfHd1E6cS6M1FZcD1NNLYD5lFHpPI9bTwJlsde3uhGqC0ZCuEHg8lhzwOHrtIQbS0FVbb9k3-tVTU4fg_3L_vniUFAKwuCLqKnS2BYwdq_mzSnbLY7h_qixoR7jig3__kRhuaxwUkRz5iaiQkqgc5gHdrNP5zw","e":"AQAB"}`
	rfc7520RSAThumbprint = "9jg46WB3rR_AHD-EBXdN7cBkH1WOu0tA3M9fm21mqTI"
)

// set wraps key objects in a key set document.
func set(keys ...string) string {
	return `{"keys":[` + strings.Join(keys, ",") + `]}`
}

// with returns the key object obj with extra members appended, each given
// as `"name":value`.
func with(obj string, members ...string) string {
	return strings.TrimSuffix(obj, "}") + "," + strings.Join(members, ",") + "}"
}

// jwxFile returns a key set produced by lestrrat-go/jwx v3 (see
// testdata/jwx-v3/gen.go.txt).
func jwxFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "jwx-v3", name))
	require.NoError(t, err)
	return []byte(strings.TrimSpace(string(b)))
}

// memberErrors returns the *MemberErrors in err, which may be one error or
// several joined.
func memberErrors(t testing.TB, err error) []*jwks.MemberError {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]*jwks.MemberError, 0, len(errs))
	for _, e := range errs {
		var me *jwks.MemberError
		require.True(t, errors.As(e, &me), "error %v is not a *MemberError", e)
		out = append(out, me)
	}
	return out
}

// problem is the part of a MemberError a test asserts on.
type problem struct {
	Index  int
	Member string
	Path   string
	Kind   error
}

func problems(t testing.TB, err error) []problem {
	t.Helper()
	var out []problem
	for _, me := range memberErrors(t, err) {
		require.ErrorIs(t, me, me.Kind)
		out = append(out, problem{Index: me.Index, Member: me.Member, Path: me.Path, Kind: me.Kind})
	}
	return out
}

// signerOnly hides every method of a private key but Public and Sign, as a
// KMS or HSM key would.
type signerOnly struct{ crypto.Signer }

// privateMemberNames are the JWK members that hold private or symmetric
// material.
var privateMemberNames = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// isPrivateName reports whether name is a private member in any case, as
// encoding/json would match it against a field tagged with the name.
func isPrivateName(name string) bool {
	for _, m := range privateMemberNames {
		if strings.EqualFold(name, m) {
			return true
		}
	}
	return false
}

// parseSetKeys returns the keys ParseSet takes from doc, skipping others.
func parseSetKeys(t testing.TB, doc string) []jwks.Key {
	t.Helper()
	s, err := jwks.ParseSet([]byte(doc), jwks.ParseOptions{})
	require.NoError(t, err)
	return s.Keys
}

// newKeys applies jwks.NewKey to each key.
func newKeys(keys ...crypto.PublicKey) ([]jwks.Key, error) {
	out := make([]jwks.Key, 0, len(keys))
	for _, k := range keys {
		key, err := jwks.NewKey(k)
		if err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, nil
}

// requireUnsupported holds err to a refused key: it matches
// ErrUnsupportedKey and says which type of key and why ("unsupported key
// *rsa.PublicKey: 1024-bit modulus ..."); typ empty accepts any type.
func requireUnsupported(t *testing.T, err error, typ string) {
	t.Helper()
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	if typ == "" {
		typ = `\S+`
	} else {
		typ = regexp.QuoteMeta(typ)
	}
	require.Regexp(t, `unsupported key `+typ+`: \S`, err.Error())
}

// requireSetError holds err to a refusal of the key set document as a
// whole: it matches kind and no other of the set's sentinels, and names
// no key.
func requireSetError(t *testing.T, err error, kind error) {
	t.Helper()
	require.ErrorIs(t, err, kind)
	for _, other := range []error{jwks.ErrMalformedSet, jwks.ErrSetTooLarge, jwks.ErrNoKeys} {
		if other != kind {
			require.NotErrorIs(t, err, other)
		}
	}
	var me *jwks.MemberError
	require.False(t, errors.As(err, &me), "a set error names no key")
}

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
