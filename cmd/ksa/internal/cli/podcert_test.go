package cli

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/podcert"
)

func TestPodcertHostPolicy(t *testing.T) {
	req := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout", PodName: "checkout-0"}
	noPod := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout"}
	noAccount := &podcert.Request{Namespace: "shop", PodName: "checkout-0"}
	for _, tc := range []struct {
		name     string
		flags    podcertFlags
		req      *podcert.Request
		asked    podcert.Asked
		admitted bool
	}{
		{name: "exact: the service named after the service account",
			flags: podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"checkout.shop.svc"}}, admitted: true},
		{name: "exact: another service of the namespace is refused",
			flags: podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "exact: a name below it is refused",
			flags: podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"x.checkout.shop.svc"}}},
		{name: "suffix: a name below it",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}, admitted: true},
		{name: "suffix: the suffix itself is refused",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"shop.svc"}}},
		{name: "suffix: another namespace is refused",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.bank.svc"}}},
		{name: "suffix: a namespace sharing the tail is refused",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.myshop.svc"}}},
		{name: "pattern in capitals matches the lower-case name",
			flags: podcertFlags{hosts: []string{"{pod}.Example.COM"}}, asked: podcert.Asked{DNSNames: []string{"checkout-0.example.com"}}, admitted: true},
		{name: "one name refused refuses the request",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc", "bank.example.com"}}},
		{name: "a literal pattern",
			flags: podcertFlags{hosts: []string{"shop.example.com"}}, asked: podcert.Asked{DNSNames: []string{"shop.example.com"}}, admitted: true},

		// A placeholder never expands to nothing: the pattern does not
		// become the suffix ".shop.svc" that admits another service.
		{name: "empty pod name: another service's name is refused",
			flags: podcertFlags{hosts: []string{"{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "empty pod name: the bare suffix is refused",
			flags: podcertFlags{hosts: []string{"{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"shop.svc"}}},
		{name: "empty service account: refused",
			flags: podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc"}}, req: noAccount, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "empty pod name in a pattern for names below: refused",
			flags: podcertFlags{hosts: []string{".{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},

		{name: "IP addresses need --allow-ip-hosts",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}},
		{name: "IP addresses with --allow-ip-hosts",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}, admitted: true},
		{name: "an IP address outside every --allow-ip-hosts range is refused",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("192.168.0.1")}}},
		{name: "one of several ranges",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8", "fd00::/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("fd00::1"), netip.MustParseAddr("10.1.2.3")}}, admitted: true},
		{name: "one address outside refuses the request",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("11.0.0.1")}}},
		{name: "an IPv4-mapped IPv6 address is not in an IPv4 range",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("::ffff:10.0.0.1")}}},
		{name: "extensions need --allow-extensions",
			flags: podcertFlags{ipRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}},
		{name: "extensions with --allow-extensions",
			flags: podcertFlags{allowExtensions: true}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}, admitted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.flags.policy()
			require.NoError(t, err)
			r := req
			if tc.req != nil {
				r = tc.req
			}
			err = p.Admit(r, tc.asked)
			if tc.admitted {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	p, err := (&podcertFlags{}).policy()
	require.NoError(t, err)
	assert.Nil(t, p, "no flag: no policy, every annotation denied")

	// A service account or pod name with dots never stands for a label:
	// "checkout.shop" in namespace evil must not get the FQDN of the
	// checkout service of namespace shop.
	dotted := &podcert.Request{Namespace: "evil", ServiceAccountName: "checkout.shop", PodName: "checkout.shop"}
	for _, pattern := range []string{"{serviceaccount}.svc.cluster.local", "{pod}.svc.cluster.local"} {
		p, err := (&podcertFlags{hosts: []string{pattern}}).policy()
		require.NoError(t, err)
		assert.Error(t, p.Admit(dotted, podcert.Asked{DNSNames: []string{"checkout.shop.svc.cluster.local"}}), pattern)
	}
}

// TestPodcertPolicyFlags: patterns in which a placeholder is not a whole
// DNS label, unknown placeholders and ranges that are not CIDRs are usage
// errors, found when the flags are read.
func TestPodcertPolicyFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   podcertFlags
		wantErr string
	}{
		{name: "placeholders as labels", flags: podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc", ".{namespace}.svc", "{pod}", "example.com"}}},
		{name: "two placeholders joined by a hyphen", flags: podcertFlags{hosts: []string{"{serviceaccount}-{namespace}.svc"}}, wantErr: "joins a placeholder to other text"},
		{name: "a placeholder with a prefix", flags: podcertFlags{hosts: []string{"web-{pod}.example.com"}}, wantErr: "joins a placeholder to other text"},
		{name: "a placeholder with a suffix", flags: podcertFlags{hosts: []string{"{pod}x.example.com"}}, wantErr: "joins a placeholder to other text"},
		{name: "an unknown placeholder", flags: podcertFlags{hosts: []string{"{node}.example.com"}}, wantErr: "unknown placeholder {node}"},
		{name: "an unclosed brace", flags: podcertFlags{hosts: []string{"{pod.example.com"}}, wantErr: "joins a placeholder"},
		{name: "an empty label", flags: podcertFlags{hosts: []string{"{pod}..svc"}}, wantErr: "not a DNS label"},
		{name: "a trailing dot", flags: podcertFlags{hosts: []string{"{pod}.svc."}}, wantErr: "not a DNS label"},
		{name: "only a dot", flags: podcertFlags{hosts: []string{"."}}, wantErr: "has no DNS label"},
		{name: "a wildcard", flags: podcertFlags{hosts: []string{"*.shop.svc"}}, wantErr: "not a DNS label"},
		{name: "CIDRs", flags: podcertFlags{ipRanges: []string{"10.0.0.0/8", "10.0.0.5/32", "fd00::/8"}}},
		{name: "an address without a length", flags: podcertFlags{ipRanges: []string{"10.0.0.5"}}, wantErr: "is an address, not a CIDR; fix: give a CIDR: --allow-ip-hosts 10.0.0.5/32"},
		{name: "not a CIDR", flags: podcertFlags{ipRanges: []string{"true"}}, wantErr: "is not a CIDR"},
		{name: "bits past the length", flags: podcertFlags{ipRanges: []string{"10.0.0.1/8"}}, wantErr: "fix: give the range's first address: --allow-ip-hosts 10.0.0.0/8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.flags.policy()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Equal(t, exitUsage, exitCode(err))
		})
	}
}
