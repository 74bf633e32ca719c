package podcertcmd

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert"
)

// hostFix is the advice for an --allow-host pattern that cannot be used.
const hostFix = "write each placeholder as a DNS label of its own, one of {namespace}, {serviceaccount} and {pod}, between dots or at an end, e.g. --allow-host '{serviceaccount}.{namespace}.svc' or --allow-host '.{namespace}.svc'"

// policy builds the signer's policy from the flags (podcert.HostPolicy):
// nil when nothing is admitted (every annotation is then denied), a usage
// error for a pattern or a range that cannot be used.
func (f *podcertFlags) policy() (podcert.Policy, error) {
	if len(f.hosts) == 0 && len(f.ipRanges) == 0 && !f.allowExtensions {
		return nil, nil
	}
	p, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{Hosts: f.hosts, IPRanges: f.ipRanges, AllowExtensions: f.allowExtensions})
	if err == nil {
		return p, nil
	}
	var ce *ksa.ConfigError
	if !errors.As(err, &ce) {
		return nil, base.Fail(err, base.BugFix, "reading the host policy")
	}
	if strings.HasPrefix(ce.Field, "podcert.HostPolicyConfig.Hosts[") {
		return nil, base.Usage(hostFix, "--allow-host %s", ce.Reason)
	}
	var i int
	if _, serr := fmt.Sscanf(ce.Field, "podcert.HostPolicyConfig.IPRanges[%d]", &i); serr == nil && i >= 0 && i < len(f.ipRanges) {
		return nil, base.Usage(ipRangeFix(f.ipRanges[i]), "--allow-ip-hosts %s", ce.Reason)
	}
	return nil, base.Fail(err, base.BugFix, "reading the host policy")
}

// ipRangeFix is the advice for an --allow-ip-hosts value that is not a
// CIDR: an address alone, or the range's first address.
func ipRangeFix(v string) string {
	if a, err := netip.ParseAddr(v); err == nil {
		return fmt.Sprintf("give a CIDR: --allow-ip-hosts %s/%d for this address alone", a, a.BitLen())
	}
	if p, err := netip.ParsePrefix(v); err == nil {
		return "give the range's first address: --allow-ip-hosts " + p.Masked().String()
	}
	return "give a CIDR, e.g. --allow-ip-hosts 10.0.0.0/8"
}
