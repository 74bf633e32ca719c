package x509sa_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// TestParseSPIFFEID holds the parser to the SPIFFE ID rules and go-spiffe's
// cases (github.com/spiffe/go-spiffe/v2/spiffeid).
func TestParseSPIFFEID(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		want   x509sa.SPIFFEID
		reason string // substring of the error's reason
	}{
		{name: "service account", id: "spiffe://cluster.local/ns/ns1/sa/sa1", want: x509sa.SPIFFEID{TrustDomain: "cluster.local", Path: "/ns/ns1/sa/sa1"}},
		{name: "trust domain only", id: "spiffe://trustdomain", want: x509sa.SPIFFEID{TrustDomain: "trustdomain"}},
		{name: "dot-led segments are fine", id: "spiffe://td/.path/..path/...", want: x509sa.SPIFFEID{TrustDomain: "td", Path: "/.path/..path/..."}},
		{name: "upper case path", id: "spiffe://td/Path_1-x", want: x509sa.SPIFFEID{TrustDomain: "td", Path: "/Path_1-x"}},
		{name: "trust domain of 255", id: "spiffe://" + strings.Repeat("t", 255), want: x509sa.SPIFFEID{TrustDomain: strings.Repeat("t", 255)}},
		{name: "2048 bytes", id: "spiffe://td/" + strings.Repeat("p", 2048-len("spiffe://td/")), want: x509sa.SPIFFEID{TrustDomain: "td", Path: "/" + strings.Repeat("p", 2048-len("spiffe://td/"))}},

		{name: "empty", id: "", reason: "cannot be empty"},
		{name: "2049 bytes", id: "spiffe://td/" + strings.Repeat("p", 2049-len("spiffe://td/")), reason: "longer than 2048"},
		{name: "trailing slash", id: "spiffe://trustdomain/", reason: "trailing slash"},
		{name: "empty segment", id: "spiffe://trustdomain//path", reason: "empty segments"},
		{name: "dot segment", id: "spiffe://trustdomain/./path", reason: "dot segments"},
		{name: "dot-dot segment", id: "spiffe://trustdomain/path/..", reason: "dot segments"},
		{name: "scheme case", id: "Spiffe://trustdomain/path", reason: "scheme"},
		{name: "one slash", id: "spiffe:/trustdomain/path", reason: "scheme"},
		{name: "other scheme", id: "https://trustdomain/path", reason: "scheme"},
		{name: "missing trust domain", id: "spiffe://", reason: "trust domain is missing"},
		{name: "missing trust domain with path", id: "spiffe:///path", reason: "trust domain is missing"},
		{name: "upper-case trust domain", id: "spiffe://Cluster.local/ns/a/sa/b", reason: "trust domain characters"},
		{name: "port", id: "spiffe://td:443/path", reason: "trust domain characters"},
		{name: "user info", id: "spiffe://user@td/path", reason: "trust domain characters"},
		{name: "trust domain of 256", id: "spiffe://" + strings.Repeat("t", 256), reason: "longer than 255"},
		{name: "percent-encoding", id: "spiffe://td/pa%20th", reason: "path segment characters"},
		{name: "query", id: "spiffe://td/path?x=1", reason: "path segment characters"},
		{name: "fragment", id: "spiffe://td/path#x", reason: "path segment characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x509sa.ParseSPIFFEID(tt.id)
			if tt.reason != "" {
				require.ErrorIs(t, err, x509sa.ErrInvalidSPIFFEID)
				assert.ErrorContains(t, err, tt.reason)
				assert.ErrorContains(t, err, "SPIFFE ID "+strconv.Quote(tt.id)+": ")
				assert.True(t, got.IsZero())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.id, got.String())
			assert.Equal(t, tt.id, got.URL().String())
		})
	}
}

func TestSPIFFEIDServiceAccount(t *testing.T) {
	id, err := x509sa.NewSPIFFEID("cluster.local", testSA)
	require.NoError(t, err)
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", id.String())
	sa, err := id.ServiceAccount()
	require.NoError(t, err)
	assert.Equal(t, ksa.ServiceAccount{Namespace: "shop", Name: "cart"}, sa)

	for _, path := range []string{"", "/ns/shop", "/ns/shop/sa", "/ns/shop/sa/cart/x", "/ns/Shop/sa/cart", "/sa/cart/ns/shop", "/ns/shop/sa/"} {
		_, err := x509sa.SPIFFEID{TrustDomain: "td", Path: path}.ServiceAccount()
		require.ErrorIs(t, err, x509sa.ErrInvalidSPIFFEID, path)
	}

	_, err = x509sa.NewSPIFFEID("Bad", testSA)
	require.ErrorIs(t, err, x509sa.ErrInvalidSPIFFEID)
	_, err = x509sa.NewSPIFFEID("td", ksa.ServiceAccount{Namespace: "a"})
	require.ErrorIs(t, err, x509sa.ErrInvalidSPIFFEID)
	_, err = x509sa.NewSPIFFEID(strings.Repeat("t", 255), ksa.ServiceAccount{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("s", 253)})
	require.NoError(t, err, "%d bytes fit", 9+255+4+63+4+253)
	assert.Nil(t, x509sa.SPIFFEID{}.URL())
	assert.Empty(t, x509sa.SPIFFEID{}.String())
	require.NoError(t, x509sa.CheckTrustDomain("a.b-c_d"))
}
