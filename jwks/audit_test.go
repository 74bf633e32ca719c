package jwks_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// auditCase is one document for Audit: clean (no want, no wantSet), a key
// set with problems (want, in order), or not a key set at all (wantSet).
type auditCase struct {
	name    string
	doc     string
	want    []problem
	wantSet error
}

func private(index int, member string) problem {
	return problem{Index: index, Member: member, Kind: jwks.ErrPrivateMaterial}
}

func privateAt(index int, member, path string) problem {
	return problem{Index: index, Member: member, Path: path, Kind: jwks.ErrPrivateMaterial}
}

func unknownKty(index int) problem {
	return problem{Index: index, Member: "kty", Kind: jwks.ErrUnknownKeyType}
}

func unsupported(index int, member string) problem {
	return problem{Index: index, Member: member, Kind: jwks.ErrUnsupportedKey}
}

// auditCases are shared with the fuzz targets as seeds.
func auditCases(t testing.TB) []auditCase {
	ours, err := jwks.MarshalSet([]jwks.Key{
		mustKey(t, testkeys.K8sRSA()), mustKey(t, testkeys.K8sEC()),
		mustKey(t, testkeys.Generated("p521")), mustKey(t, testkeys.Generated("ed25519")),
	})
	require.NoError(t, err)
	return []auditCase{
		// Ours and foreign, clean.
		{name: "Kubernetes' key set", doc: k8sJWKS},
		{name: "ours, all key types", doc: string(ours)},
		{name: "empty", doc: `{"keys":[]}`},
		{name: "RFC 7517 A.1", doc: rfc7517A1},
		{name: "RFC 7520 keys", doc: set(rfc7520EC, rfc7520RSA)},
		{name: "jwx v3 public set", doc: string(jwxFile(t, "public.json"))},
		{name: "other top-level members", doc: `{"keys":[` + okpJWK + `],"x-extra":{"kid":1},"list":[{"e":"AQAB"}]}`},
		{name: "unknown members in a key", doc: set(with(rsaJWK, `"x5c":["MIIB"]`, `"x5t#S256":"abc"`, `"ext":true`, `"nested":{"n":"public"}`))},
		{name: "whitespace everywhere", doc: " { \"keys\" : [ " + ecJWK + " ] } \n"},

		// Private and symmetric material.
		{name: "d on RSA", doc: set(with(rsaJWK, `"d":"AQAB"`)), want: []problem{private(0, "d")}},
		{name: "d on EC", doc: set(with(ecJWK, `"d":"AQAB"`)), want: []problem{private(0, "d")}},
		{name: "d on OKP", doc: set(with(okpJWK, `"d":"`+rfc8037D+`"`)), want: []problem{private(0, "d")}},
		{name: "RSA private members", doc: set(with(rsaJWK, `"p":"AQ"`, `"q":"AQ"`, `"dp":"AQ"`, `"dq":"AQ"`, `"qi":"AQ"`)),
			want: []problem{private(0, "p"), private(0, "q"), private(0, "dp"), private(0, "dq"), private(0, "qi")}},
		{name: "oth", doc: set(with(rsaJWK, `"oth":[{"r":"AQ","d":"AQ","t":"AQ"}]`)), want: []problem{private(0, "oth")}},
		{name: "null d", doc: set(with(ecJWK, `"d":null`)), want: []problem{private(0, "d")}},
		{name: "empty d", doc: set(with(ecJWK, `"d":""`)), want: []problem{private(0, "d")}},
		{name: "k with kty oct", doc: set(`{"kty":"oct","k":"c2VjcmV0"}`), want: []problem{private(0, "k"), unknownKty(0)}},
		{name: "k on an RSA key", doc: set(with(rsaJWK, `"k":"c2VjcmV0"`)), want: []problem{private(0, "k")}},
		{name: "escaped d", doc: set(with(ecJWK, `"\u0064":"AQAB"`)), want: []problem{private(0, "d")}},
		{name: "escaped dp", doc: set(with(rsaJWK, `"\u0064\u0070":"AQAB"`)), want: []problem{private(0, "dp")}},
		{name: "upper-case D", doc: set(with(ecJWK, `"D":"AQAB"`)), want: []problem{private(0, "D")}},
		{name: "escaped upper-case D", doc: set(with(ecJWK, `"\u0044":"AQAB"`)), want: []problem{private(0, "D")}},
		{name: "mixed-case Qi", doc: set(with(rsaJWK, `"Qi":"AQAB"`)), want: []problem{private(0, "Qi")}},
		{name: "Kelvin sign K", doc: set(`{"kty":"RSA","n":"AQ","e":"AQAB","\u212a":"c2VjcmV0"}`), want: []problem{private(0, "\u212a")}},
		{name: "d and D", doc: set(with(ecJWK, `"d":"AQ"`, `"D":"AQ"`)), want: []problem{private(0, "d"), private(0, "D")}},
		{name: "d twice", doc: set(with(ecJWK, `"d":"AQ"`, `"d":"AQ"`)), want: []problem{private(0, "d"), private(0, "d"), unsupported(0, "d")}},
		{name: "private key in the second key", doc: set(rsaJWK, with(ecJWK, `"d":"AQ"`)), want: []problem{private(1, "d")}},

		// Private material anywhere in the document, not only in a key.
		{name: "d nested in a key's member", doc: set(with(rsaJWK, `"nested":{"d":"AQ"}`)), want: []problem{privateAt(0, "d", "$.keys[0].nested")}},
		{name: "k deep in a key's array", doc: set(with(ecJWK, `"ext":[1,{"x":[{"K":"AQ"}]}]`)), want: []problem{privateAt(0, "K", "$.keys[0].ext[1].x[0]")}},
		{name: "d beside keys", doc: `{"keys":[` + okpJWK + `],"d":"AQ"}`, want: []problem{privateAt(-1, "d", "$")}},
		{name: "private JWK beside keys", doc: `{"keys":[],"backup":[` + with(ecJWK, `"d":"AQ"`) + `]}`, want: []problem{privateAt(-1, "d", "$.backup[0]")}},
		{name: "key-level and nested, in document order", doc: `{"keys":[` + with(rsaJWK, `"meta":{"qi":"AQ"}`) + `,` + with(ecJWK, `"d":"AQ"`) + `],"meta":{"oth":[]}}`,
			want: []problem{privateAt(0, "qi", "$.keys[0].meta"), private(1, "d"), privateAt(-1, "oth", "$.meta")}},
		{name: "RFC 7517 A.2 private EC key", doc: rfc7517A2EC, want: []problem{private(0, "d")}},
		{name: "RFC 7520 private P-521 key", doc: set(with(rfc7520EC, `"d":"`+rfc7520ECD+`"`)), want: []problem{private(0, "d")}},
		{name: "jwx v3 private set", doc: string(jwxFile(t, "private.json")), want: []problem{
			private(0, "d"), private(0, "dp"), private(0, "dq"), private(0, "p"), private(0, "q"), private(0, "qi"),
			private(1, "d"), private(2, "d"),
		}},
		{name: "jwx v3 PublicSetOf keeping an oct key", doc: string(jwxFile(t, "publicsetof-allow-symmetric.json")),
			want: []problem{private(3, "k"), unknownKty(3)}},

		// Key types.
		{name: "unknown kty", doc: set(`{"kty":"EC2","crv":"P-256","x":"AQ","y":"AQ"}`), want: []problem{unknownKty(0)}},
		{name: "oct without k", doc: set(`{"kty":"oct"}`), want: []problem{unknownKty(0)}},
		{name: "lower-case kty value", doc: set(`{"kty":"rsa","n":"AQ","e":"AQAB"}`), want: []problem{unknownKty(0)}},
		{name: "missing kty", doc: set(`{"n":"AQ","e":"AQAB"}`), want: []problem{unknownKty(0)}},
		{name: "empty key object", doc: set(`{}`), want: []problem{unknownKty(0)}},
		{name: "kty not a string", doc: set(`{"kty":1}`), want: []problem{unsupported(0, "kty"), unknownKty(0)}},
		{name: "duplicate kty", doc: set(`{"kty":"RSA","n":"AQ","e":"AQAB","kty":"RSA"}`), want: []problem{unsupported(0, "kty")}},
		{name: "escaped duplicate kty", doc: set(`{"kty":"RSA","n":"AQ","e":"AQAB","\u006bty":"oct"}`), want: []problem{unsupported(0, "kty"), unknownKty(0)}},
		{name: "duplicate unknown member", doc: set(with(okpJWK, `"ext":true`, `"ext":false`)), want: []problem{unsupported(0, "ext")}},
		{name: "case variant of kty", doc: set(with(rsaJWK, `"KTY":"oct"`)), want: []problem{unsupported(0, "KTY")}},
		{name: "case variant of n", doc: set(with(rsaJWK, `"N":"AQ"`)), want: []problem{unsupported(0, "N")}},
		{name: "non-object key", doc: `{"keys":[1]}`, want: []problem{unsupported(0, "")}},
		{name: "null key", doc: `{"keys":[null]}`, want: []problem{unsupported(0, "")}},
		{name: "array key", doc: `{"keys":[[` + ecJWK + `]]}`, want: []problem{unsupported(0, "")}},
		{name: "string key", doc: `{"keys":["` + "{\\\"kty\\\":\\\"oct\\\"}" + `"]}`, want: []problem{unsupported(0, "")}},

		// Several problems, joined, in document order.
		{name: "several keys", doc: set(rsaJWK, `{"kty":"oct","k":"AQ"}`, `7`, with(okpJWK, `"d":"AQ"`), ecJWK),
			want: []problem{private(1, "k"), unknownKty(1), unsupported(2, ""), private(3, "d")}},

		// Not a key set.
		{name: "not JSON", doc: `keys`, wantSet: jwks.ErrMalformedSet},
		{name: "empty document", doc: ``, wantSet: jwks.ErrMalformedSet},
		{name: "array", doc: `[` + ecJWK + `]`, wantSet: jwks.ErrMalformedSet},
		{name: "a single JWK", doc: ecJWK, wantSet: jwks.ErrMalformedSet},
		{name: "no keys member", doc: `{"key":[]}`, wantSet: jwks.ErrMalformedSet},
		{name: "keys is an object", doc: `{"keys":{}}`, wantSet: jwks.ErrMalformedSet},
		{name: "keys is null", doc: `{"keys":null}`, wantSet: jwks.ErrMalformedSet},
		{name: "keys twice", doc: `{"keys":[],"keys":[]}`, wantSet: jwks.ErrMalformedSet},
		{name: "keys twice, escaped", doc: `{"keys":[],"\u006beys":[{"kty":"oct","k":"AQ"}]}`, wantSet: jwks.ErrMalformedSet},
		{name: "Keys beside keys", doc: `{"keys":[],"Keys":[{"kty":"oct","k":"AQ"}]}`, wantSet: jwks.ErrMalformedSet},
		{name: "KEYS alone", doc: `{"KEYS":[` + ecJWK + `]}`, wantSet: jwks.ErrMalformedSet},
		{name: "trailing data", doc: `{"keys":[]}{}`, wantSet: jwks.ErrMalformedSet},
		{name: "trailing comma", doc: `{"keys":[` + ecJWK + `,]}`, wantSet: jwks.ErrMalformedSet},
		{name: "unterminated", doc: `{"keys":[` + ecJWK, wantSet: jwks.ErrMalformedSet},
		{name: "invalid UTF-8", doc: set(with(ecJWK, "\"kid\":\"\xff\"")), wantSet: jwks.ErrMalformedSet},
		{name: "lone surrogate", doc: set(with(ecJWK, `"kid":"\ud800"`)), wantSet: jwks.ErrMalformedSet},
		{name: "deep nesting", doc: `{"keys":[` + ecJWK + `],"x":` + nested(100) + `}`, wantSet: jwks.ErrMalformedSet},
	}
}

func nested(depth int) string {
	s := ""
	for range depth {
		s += "["
	}
	for range depth {
		s += "]"
	}
	return s
}

func TestAudit(t *testing.T) {
	for _, tt := range auditCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			err := jwks.Audit([]byte(tt.doc))
			switch {
			case tt.wantSet != nil:
				requireSetError(t, err, tt.wantSet)
			case len(tt.want) == 0:
				require.NoError(t, err)
			default:
				require.Error(t, err)
				assert.Equal(t, tt.want, problems(t, err))
				for _, p := range tt.want {
					require.ErrorIs(t, err, p.Kind)
				}
			}
		})
	}
}

// TestAuditMemberErrorFields checks what a MemberError carries beyond its
// kind: the key ID and a reason.
func TestAuditMemberErrorFields(t *testing.T) {
	doc := set(rsaJWK, with(ecJWK, `"kid":"leaky"`, `"d":"AQ"`))
	err := jwks.Audit([]byte(doc))
	require.ErrorIs(t, err, jwks.ErrPrivateMaterial)
	require.NotErrorIs(t, err, jwks.ErrUnknownKeyType)
	var me *jwks.MemberError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1, me.Index)
	assert.Equal(t, "leaky", me.KeyID)
	assert.Equal(t, "d", me.Member)
	assert.NotEmpty(t, me.Reason)
	assert.Equal(t, jwks.ErrPrivateMaterial, me.Kind)
}

// TestAuditJoinsEveryProblem: a document with several problems reports all
// of them, each reachable with errors.Is and errors.As.
func TestAuditJoinsEveryProblem(t *testing.T) {
	doc := set(with(rsaJWK, `"d":"AQ"`), `{"kty":"oct","k":"AQ"}`, `{"kty":"RSA","kty":"EC"}`)
	err := jwks.Audit([]byte(doc))
	require.ErrorIs(t, err, jwks.ErrPrivateMaterial)
	require.ErrorIs(t, err, jwks.ErrUnknownKeyType)
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "not a joined error")
	assert.Len(t, joined.Unwrap(), 4)
	assert.Equal(t, []problem{private(0, "d"), private(1, "k"), unknownKty(1), unsupported(2, "kty")}, problems(t, err))
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
