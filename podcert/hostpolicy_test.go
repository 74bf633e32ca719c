package podcert_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
)

func TestHostPolicyAdmit(t *testing.T) {
	req := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout", PodName: "checkout-0"}
	noPod := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout"}
	noAccount := &podcert.Request{Namespace: "shop", PodName: "checkout-0"}
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		name     string
		cfg      podcert.HostPolicyConfig
		req      *podcert.Request
		asked    podcert.Asked
		admitted bool
	}{
		{name: "exact: the service named after the service account",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"checkout.shop.svc"}}, admitted: true},
		{name: "exact: another service of the namespace is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "exact: a name below it is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"x.checkout.shop.svc"}}},
		{name: "suffix: a name below it",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}, admitted: true},
		{name: "suffix: the suffix itself is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"shop.svc"}}},
		{name: "suffix: another namespace is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.bank.svc"}}},
		{name: "suffix: a namespace sharing the tail is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.myshop.svc"}}},
		{name: "pattern in capitals matches the lower-case name",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}.Example.COM"}}, asked: podcert.Asked{DNSNames: []string{"checkout-0.example.com"}}, admitted: true},
		{name: "one name refused refuses the request",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc", "bank.example.com"}}},
		{name: "a literal pattern",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"shop.example.com"}}, asked: podcert.Asked{DNSNames: []string{"shop.example.com"}}, admitted: true},
		{name: "one of several patterns",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"shop.example.com", ".{namespace}.svc"}}, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}, admitted: true},

		// A placeholder never expands to nothing: the pattern does not
		// become the suffix ".shop.svc" that admits another service.
		{name: "empty pod name: another service's name is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "empty pod name: the bare suffix is refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"shop.svc"}}},
		{name: "empty service account: refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc"}}, req: noAccount, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		{name: "empty pod name in a pattern for names below: refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{pod}.{namespace}.svc"}}, req: noPod, asked: podcert.Asked{DNSNames: []string{"cart.shop.svc"}}},
		// A dotted name never stands for a label: the service account
		// "checkout.shop" of namespace evil must not get the name of the
		// checkout service of namespace shop.
		{name: "a dotted service account: refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.svc.cluster.local"}}, req: &podcert.Request{Namespace: "evil", ServiceAccountName: "checkout.shop"},
			asked: podcert.Asked{DNSNames: []string{"checkout.shop.svc.cluster.local"}}},
		{name: "a dotted pod name: refused",
			cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}.svc.cluster.local"}}, req: &podcert.Request{Namespace: "evil", PodName: "checkout.shop"},
			asked: podcert.Asked{DNSNames: []string{"checkout.shop.svc.cluster.local"}}},

		{name: "IP addresses need a range",
			cfg: podcert.HostPolicyConfig{Hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("10.0.0.1")}}},
		{name: "an IP address in a range",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("10.0.0.1")}}, admitted: true},
		{name: "an IP address outside every range is refused",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("192.168.0.1")}}},
		{name: "one of several ranges",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8", "fd00::/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("fd00::1"), ip("10.1.2.3")}}, admitted: true},
		{name: "one address outside refuses the request",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("10.1.2.3"), ip("11.0.0.1")}}},
		{name: "an IPv4-mapped IPv6 address is not in an IPv4 range",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{ip("::ffff:10.0.0.1")}}},
		{name: "extensions need AllowExtensions",
			cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8"}}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}},
		{name: "extensions with AllowExtensions",
			cfg: podcert.HostPolicyConfig{AllowExtensions: true}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}, admitted: true},
		{name: "the zero config admits nothing", asked: podcert.Asked{DNSNames: []string{"checkout.shop.svc"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := podcert.NewHostPolicy(tc.cfg)
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
			if len(tc.asked.Extensions) > 0 {
				return
			}
			all := true
			for _, h := range tc.asked.Hosts() {
				all = all && p.AllowHost(r, h)
			}
			assert.Equal(t, tc.admitted, all, "AllowHost agrees with Admit")
		})
	}
}

// TestHostPolicyAdmitWithSigner: a signer with a host policy issues the
// hosts it admits, and denies the request of one it refuses.
func TestHostPolicyAdmitWithSigner(t *testing.T) {
	p, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc"}})
	require.NoError(t, err)
	ca := newCA(t, false)
	s := newSigner(t, ca, func(c *podcert.SignerConfig) { c.Policy = p })
	r := newRequest(t, testkeys.Generated("p256"))
	req := &r
	req.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: req.ServiceAccountName + "." + req.Namespace + ".svc"}
	d, err := s.Decide(req)
	require.NoError(t, err)
	assert.Equal(t, podcert.Issued, d.Outcome)
	req.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "bank." + req.Namespace + ".svc"}
	d, err = s.Decide(req)
	require.NoError(t, err)
	assert.Equal(t, podcert.Denied, d.Outcome)
	assert.Contains(t, d.Message, `DNS name "bank.`+req.Namespace+`.svc" matches no allowed host pattern`)
}

// TestNewHostPolicyRefuses: patterns in which a placeholder is not a whole
// DNS label, unknown placeholders and ranges that are not CIDRs are
// configuration errors naming the value.
func TestNewHostPolicyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    podcert.HostPolicyConfig
		field  string
		reason string
	}{
		{name: "placeholders as labels", cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}.{namespace}.svc", ".{namespace}.svc", "{pod}", "example.com"}}},
		{name: "two placeholders joined by a hyphen", cfg: podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}-{namespace}.svc"}},
			field: "Hosts[0]", reason: `"{serviceaccount}-{namespace}.svc" joins a placeholder to other text in "{serviceaccount}-{namespace}": two requests could then get the same name`},
		{name: "a placeholder with a prefix", cfg: podcert.HostPolicyConfig{Hosts: []string{"a.b", "web-{pod}.example.com"}},
			field: "Hosts[1]", reason: `"web-{pod}.example.com" joins a placeholder to other text in "web-{pod}": two requests could then get the same name`},
		{name: "a placeholder with a suffix", cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}x.example.com"}},
			field: "Hosts[0]", reason: `"{pod}x.example.com" joins a placeholder to other text in "{pod}x": two requests could then get the same name`},
		{name: "an unknown placeholder", cfg: podcert.HostPolicyConfig{Hosts: []string{"{node}.example.com"}},
			field: "Hosts[0]", reason: `"{node}.example.com" has the unknown placeholder {node}`},
		{name: "an unclosed brace", cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod.example.com"}},
			field: "Hosts[0]", reason: `"{pod.example.com" joins a placeholder to other text in "{pod": two requests could then get the same name`},
		{name: "an empty label", cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}..svc"}},
			field: "Hosts[0]", reason: `"{pod}..svc" has "", which is not a DNS label (letters, digits and '-', at most 63)`},
		{name: "a trailing dot", cfg: podcert.HostPolicyConfig{Hosts: []string{"{pod}.svc."}},
			field: "Hosts[0]", reason: `"{pod}.svc." has "", which is not a DNS label (letters, digits and '-', at most 63)`},
		{name: "only a dot", cfg: podcert.HostPolicyConfig{Hosts: []string{"."}}, field: "Hosts[0]", reason: `"." has no DNS label`},
		{name: "a wildcard", cfg: podcert.HostPolicyConfig{Hosts: []string{"*.shop.svc"}},
			field: "Hosts[0]", reason: `"*.shop.svc" has "*", which is not a DNS label (letters, digits and '-', at most 63)`},
		{name: "CIDRs", cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8", "10.0.0.5/32", "fd00::/8"}}},
		{name: "an address without a length", cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.5"}}, field: "IPRanges[0]", reason: `"10.0.0.5" is an address, not a CIDR`},
		{name: "not a CIDR", cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8", "true"}}, field: "IPRanges[1]", reason: `"true" is not a CIDR`},
		{name: "bits past the length", cfg: podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.1/8"}}, field: "IPRanges[0]", reason: `"10.0.0.1/8" has bits set past its prefix length`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := podcert.NewHostPolicy(tc.cfg)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, "podcert.HostPolicyConfig."+tc.field, ce.Field)
			assert.Equal(t, tc.reason, ce.Reason)
		})
	}
}
