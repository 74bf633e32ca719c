package podcertcmd

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert"
)

// TestPodcertHostPolicy: the flags are podcert.HostPolicy's settings (its
// tests hold the decisions); no flag, no policy: every annotation denied.
func TestPodcertHostPolicy(t *testing.T) {
	req := &podcert.Request{Namespace: "shop", ServiceAccountName: "checkout", PodName: "checkout-0"}
	p, err := (&podcertFlags{hosts: []string{"{serviceaccount}.{namespace}.svc"}, ipRanges: []string{"10.0.0.0/8"}}).policy()
	require.NoError(t, err)
	assert.NoError(t, p.Admit(req, podcert.Asked{DNSNames: []string{"checkout.shop.svc"}, IPAddresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}))
	assert.Error(t, p.Admit(req, podcert.Asked{DNSNames: []string{"cart.shop.svc"}}))
	assert.Error(t, p.Admit(req, podcert.Asked{Extensions: map[string]string{"team": "payments"}}), "extensions need --allow-extensions")
	p, err = (&podcertFlags{allowExtensions: true}).policy()
	require.NoError(t, err)
	assert.NoError(t, p.Admit(req, podcert.Asked{Extensions: map[string]string{"team": "payments"}}))

	p, err = (&podcertFlags{}).policy()
	require.NoError(t, err)
	assert.Nil(t, p, "no flag: no policy, every annotation denied")
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
		{name: "an unknown placeholder", flags: podcertFlags{hosts: []string{"{node}.example.com"}}, wantErr: `--allow-host "{node}.example.com" has the unknown placeholder {node}; fix: write each placeholder as a DNS label of its own, one of {namespace}, {serviceaccount} and {pod}`},
		{name: "the second pattern", flags: podcertFlags{hosts: []string{"a.svc", "*.svc"}}, wantErr: `--allow-host "*.svc" has "*", which is not a DNS label`},
		{name: "an unclosed brace", flags: podcertFlags{hosts: []string{"{pod.example.com"}}, wantErr: "joins a placeholder"},
		{name: "an empty label", flags: podcertFlags{hosts: []string{"{pod}..svc"}}, wantErr: "not a DNS label"},
		{name: "a trailing dot", flags: podcertFlags{hosts: []string{"{pod}.svc."}}, wantErr: "not a DNS label"},
		{name: "only a dot", flags: podcertFlags{hosts: []string{"."}}, wantErr: "has no DNS label"},
		{name: "a wildcard", flags: podcertFlags{hosts: []string{"*.shop.svc"}}, wantErr: "not a DNS label"},
		{name: "CIDRs", flags: podcertFlags{ipRanges: []string{"10.0.0.0/8", "10.0.0.5/32", "fd00::/8"}}},
		{name: "an address without a length", flags: podcertFlags{ipRanges: []string{"10.0.0.5"}}, wantErr: "is an address, not a CIDR; fix: give a CIDR: --allow-ip-hosts 10.0.0.5/32"},
		{name: "not a CIDR", flags: podcertFlags{ipRanges: []string{"10.0.0.0/8", "true"}}, wantErr: `--allow-ip-hosts "true" is not a CIDR; fix: give a CIDR, e.g. --allow-ip-hosts 10.0.0.0/8`},
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
			assert.Equal(t, base.ExitUsage, base.ExitCode(err))
		})
	}
}
