package leafcert_test

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/leafcert"
)

// sameAsMarshal checks that Name writes what asn1.Marshal writes, or
// fails where it fails.
func sameAsMarshal(t *testing.T, rdns pkix.RDNSequence) {
	t.Helper()
	want, wantErr := asn1.Marshal(rdns)
	got, err := leafcert.Name(rdns)
	if wantErr != nil {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestName(t *testing.T) {
	uid := asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	for _, tc := range []struct {
		name string
		rdns pkix.RDNSequence
	}{
		{name: "empty", rdns: pkix.RDNSequence{}},
		{name: "service account", rdns: pkix.Name{
			CommonName:         "system:serviceaccount:shop:cart",
			Organization:       []string{"system:serviceaccounts", "system:serviceaccounts:shop"},
			OrganizationalUnit: []string{"system:pod-namespace=shop", "system:pod-name=cart-7d9f"},
			ExtraNames:         []pkix.AttributeTypeAndValue{{Type: uid, Value: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"}},
		}.ToRDNSequence()},
		{name: "every printable character", rdns: pkix.Name{CommonName: "azAZ09 '()+,-./:=?"}.ToRDNSequence()},
		{name: "asterisk and ampersand are UTF8String", rdns: pkix.Name{CommonName: "*.a&b", Organization: []string{"x_y", "a@b"}}.ToRDNSequence()},
		{name: "non-ASCII", rdns: pkix.Name{CommonName: "café"}.ToRDNSequence()},
		{name: "empty value", rdns: pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{{Type: uid, Value: ""}}}.ToRDNSequence()},
		{name: "invalid UTF-8 fails", rdns: pkix.Name{CommonName: "\xff"}.ToRDNSequence()},
		{name: "long value, long lengths", rdns: pkix.Name{CommonName: string(make([]byte, 70000))}.ToRDNSequence()},
		{name: "large arcs", rdns: pkix.RDNSequence{{{Type: asn1.ObjectIdentifier{2, 999, math.MaxInt32, 0, 127, 128}, Value: "x"}}}},
		{name: "multi-valued RDN, sorted", rdns: pkix.RDNSequence{{{Type: uid, Value: "bb"}, {Type: uid, Value: "a"}, {Type: uid, Value: "ab"}, {Type: uid, Value: "é"}}}},
		{name: "one invalid value among several fails", rdns: pkix.RDNSequence{{{Type: uid, Value: "b"}, {Type: uid, Value: "\xff"}}}},
		{name: "non-string value (left to asn1)", rdns: pkix.RDNSequence{{{Type: uid, Value: 7}}}},
		{name: "invalid OID (left to asn1)", rdns: pkix.RDNSequence{{{Type: asn1.ObjectIdentifier{1, 40}, Value: "x"}}}},
		{name: "negative arc (left to asn1)", rdns: pkix.RDNSequence{{{Type: asn1.ObjectIdentifier{1, 2, -3}, Value: "x"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMarshal(t, tc.rdns) })
	}
}

func FuzzName(f *testing.F) {
	f.Add("system:serviceaccount:shop:cart", "café", int64(2), int64(5), int64(4), false)
	f.Add("*&", "\xff", int64(0), int64(9), int64(2342), true)
	f.Add("", "", int64(1), int64(40), int64(-1), false)
	f.Fuzz(func(t *testing.T, a, b string, arc0, arc1, arc2 int64, multi bool) {
		oid := asn1.ObjectIdentifier{int(arc0), int(arc1), int(arc2)}
		rdns := pkix.RDNSequence{{{Type: oid, Value: a}}, {{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: b}}}
		if multi {
			rdns[0] = append(rdns[0], pkix.AttributeTypeAndValue{Type: oid, Value: b})
		}
		sameAsMarshal(t, rdns)
	})
}
