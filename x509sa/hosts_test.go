package x509sa_test

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/x509sa"
)

func TestSplitHosts(t *testing.T) {
	ip := netip.MustParseAddr
	tests := []struct {
		name    string
		hosts   []string
		dns     []string
		ips     []netip.Addr
		wantErr error
	}{
		{name: "none", hosts: nil},
		{name: "mixed, deduplicated, order kept", hosts: []string{"cart.shop.svc", "10.0.0.1", "Cart.Shop.svc", "::1", "10.0.0.1", "localhost"},
			dns: []string{"cart.shop.svc", "localhost"}, ips: []netip.Addr{ip("10.0.0.1"), ip("::1")}},
		{name: "IPv4-mapped IPv6 becomes IPv4", hosts: []string{"::ffff:10.0.0.1", "10.0.0.1"}, ips: []netip.Addr{ip("10.0.0.1")}},
		{name: "label of 63", hosts: []string{strings.Repeat("a", 63) + ".svc"}, dns: []string{strings.Repeat("a", 63) + ".svc"}},
		{name: "name of 253", hosts: []string{strings.Repeat(strings.Repeat("a", 49)+".", 5) + "svc"}, dns: []string{strings.Repeat(strings.Repeat("a", 49)+".", 5) + "svc"}},
		{name: "digits in non-final labels", hosts: []string{"1.2.3.example"}, dns: []string{"1.2.3.example"}},
		{name: "64 hosts", hosts: func() []string {
			var h []string
			for i := range 64 {
				h = append(h, fmt.Sprintf("h%d.svc", i))
			}
			return h
		}(), dns: func() []string {
			var h []string
			for i := range 64 {
				h = append(h, fmt.Sprintf("h%d.svc", i))
			}
			return h
		}()},

		{name: "65 hosts", hosts: make([]string, 65), wantErr: x509sa.ErrLimit},
		{name: "empty", hosts: []string{""}, wantErr: x509sa.ErrInvalidHost},
		{name: "leading zero IPv4 (ParseIPSloppy would take it)", hosts: []string{"010.0.0.1"}, wantErr: x509sa.ErrInvalidHost},
		{name: "numeric final label", hosts: []string{"1.2.3"}, wantErr: x509sa.ErrInvalidHost},
		{name: "zone", hosts: []string{"fe80::1%eth0"}, wantErr: x509sa.ErrInvalidHost},
		{name: "brackets", hosts: []string{"[::1]"}, wantErr: x509sa.ErrInvalidHost},
		{name: "host:port", hosts: []string{"cart.svc:443"}, wantErr: x509sa.ErrInvalidHost},
		{name: "unspecified v4", hosts: []string{"0.0.0.0"}, wantErr: x509sa.ErrInvalidHost},
		{name: "unspecified v6", hosts: []string{"::"}, wantErr: x509sa.ErrInvalidHost},
		{name: "wildcard", hosts: []string{"*.shop.svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "trailing dot", hosts: []string{"cart.svc."}, wantErr: x509sa.ErrInvalidHost},
		{name: "leading dot", hosts: []string{".cart.svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "double dot", hosts: []string{"cart..svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "underscore", hosts: []string{"_srv.cart.svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "label edge hyphen", hosts: []string{"-cart.svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "label of 64", hosts: []string{strings.Repeat("a", 64) + ".svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "name of 254", hosts: []string{strings.Repeat(strings.Repeat("a", 49)+".", 5) + "svc12"}, wantErr: x509sa.ErrInvalidHost},
		{name: "NUL", hosts: []string{"cart\x00.evil.com"}, wantErr: x509sa.ErrInvalidHost},
		{name: "non-ASCII", hosts: []string{"cärt.svc"}, wantErr: x509sa.ErrInvalidHost},
		{name: "URL", hosts: []string{"https://cart.svc"}, wantErr: x509sa.ErrInvalidHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns, ips, err := x509sa.SplitHosts(tt.hosts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.wantErr == x509sa.ErrInvalidHost {
					assert.ErrorContains(t, err, "host ")
				} else {
					assert.ErrorContains(t, err, "over the limit of "+strconv.Itoa(x509sa.MaxHosts))
				}
				assert.Nil(t, dns)
				assert.Nil(t, ips)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.dns, dns)
			assert.Equal(t, tt.ips, ips)
		})
	}
}
