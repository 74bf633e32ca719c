package cli

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/podcert"
)

func TestPodcertHostPolicy(t *testing.T) {
	req := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout", PodName: "checkout-0"}
	for _, tc := range []struct {
		name     string
		flags    podcertFlags
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
		{name: "IP addresses need --allow-ip-hosts",
			flags: podcertFlags{hosts: []string{".{namespace}.svc"}}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}},
		{name: "IP addresses with --allow-ip-hosts",
			flags: podcertFlags{allowIPs: true}, asked: podcert.Asked{IPAddresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}, admitted: true},
		{name: "extensions need --allow-extensions",
			flags: podcertFlags{allowIPs: true}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}},
		{name: "extensions with --allow-extensions",
			flags: podcertFlags{allowExtensions: true}, asked: podcert.Asked{Extensions: map[string]string{"team": "payments"}}, admitted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.flags.policy()
			err := p.Admit(req, tc.asked)
			if tc.admitted {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	assert.Nil(t, (&podcertFlags{}).policy(), "no flag: no policy, every annotation denied")

	// A service account or pod name with dots never stands for a label:
	// "checkout.shop" in namespace evil must not get the FQDN of the
	// checkout service of namespace shop.
	dotted := &podcert.Request{Namespace: "evil", ServiceAccountName: "checkout.shop", PodName: "checkout.shop"}
	for _, pattern := range []string{"{serviceaccount}.svc.cluster.local", "{pod}.svc.cluster.local"} {
		p := (&podcertFlags{hosts: []string{pattern}}).policy()
		assert.Error(t, p.Admit(dotted, podcert.Asked{DNSNames: []string{"checkout.shop.svc.cluster.local"}}), pattern)
	}
}
