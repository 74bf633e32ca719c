package cli

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/ksa-go/ksa/podcert"
)

// The placeholders of an --allow-host pattern.
const (
	placeNamespace      = "{namespace}"
	placeServiceAccount = "{serviceaccount}"
	placePod            = "{pod}"
)

// hostPattern is a parsed --allow-host pattern: DNS labels, each a literal
// or a whole placeholder; with below, it admits the names under it.
type hostPattern struct {
	labels []string
	below  bool
}

// hostFix is the advice for a pattern that cannot be used.
const hostFix = "write each placeholder as a DNS label of its own, between dots or at an end, e.g. --allow-host '{serviceaccount}.{namespace}.svc' or --allow-host '.{namespace}.svc'"

// parseHostPattern reads an --allow-host pattern. A placeholder must be a
// whole DNS label: joined to anything else ("{serviceaccount}-{namespace}")
// two different requests could expand to the same name (the service
// account a-b of namespace c and the account a of namespace b-c), so such
// a pattern is refused.
func parseHostPattern(p string) (hostPattern, error) {
	var hp hostPattern
	rest := strings.ToLower(p)
	if r, ok := strings.CutPrefix(rest, "."); ok {
		hp.below, rest = true, r
	}
	if rest == "" {
		return hp, usage(hostFix, "--allow-host %q has no DNS label", p)
	}
	for _, label := range strings.Split(rest, ".") {
		switch {
		case label == placeNamespace, label == placeServiceAccount, label == placePod:
		case strings.ContainsAny(label, "{}"):
			if !strings.HasPrefix(label, "{") || !strings.HasSuffix(label, "}") || strings.Count(label, "{") > 1 {
				return hp, usage(hostFix, "--allow-host %q joins a placeholder to other text in %q: two requests could then get the same name", p, label)
			}
			return hp, usage("use {namespace}, {serviceaccount} or {pod}", "--allow-host %q has the unknown placeholder %s", p, label)
		case !isDNSLabel(label):
			return hp, usage(hostFix, "--allow-host %q has %q, which is not a DNS label (letters, digits and '-', at most 63)", p, label)
		}
		hp.labels = append(hp.labels, label)
	}
	return hp, nil
}

// isDNSLabel reports whether s is an RFC 1123 label: 1 to 63 letters,
// digits and hyphens, not starting or ending with a hyphen.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// expand returns the pattern's name for a request, or false when a
// placeholder would not stand for exactly one DNS label: an empty value
// (a pattern "{pod}.{namespace}.svc" would otherwise become the suffix
// ".shop.svc" and admit another service's name) or a dotted one (the
// service account "checkout.shop" of another namespace would otherwise get
// "checkout.shop.svc.cluster.local" through "{serviceaccount}.svc.cluster.local").
func (hp hostPattern) expand(req *podcert.Request) (string, bool) {
	out := make([]string, len(hp.labels))
	for i, label := range hp.labels {
		v := label
		switch label {
		case placeNamespace:
			v = req.Namespace
		case placeServiceAccount:
			v = req.ServiceAccountName
		case placePod:
			v = req.PodName
		}
		if !isDNSLabel(v) {
			return "", false
		}
		out[i] = strings.ToLower(v)
	}
	return strings.Join(out, "."), true
}

// admits reports whether a DNS name (lower case, as podcert reads it)
// matches the pattern for a request: equal to it, or with below, a name
// under it.
func (hp hostPattern) admits(name string, req *podcert.Request) bool {
	p, ok := hp.expand(req)
	if !ok {
		return false
	}
	if hp.below {
		return strings.HasSuffix(name, "."+p) && len(name) > len(p)+1
	}
	return name == p
}

// parseIPRange reads an --allow-ip-hosts CIDR.
func parseIPRange(v string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		if a, err := netip.ParseAddr(v); err == nil {
			return p, usage(fmt.Sprintf("give a CIDR: --allow-ip-hosts %s/%d for this address alone", a, a.BitLen()), "--allow-ip-hosts %q is an address, not a CIDR", v)
		}
		return p, usage("give a CIDR, e.g. --allow-ip-hosts 10.0.0.0/8", "--allow-ip-hosts %q is not a CIDR", v)
	}
	if p != p.Masked() {
		return p, usage("give the range's first address: --allow-ip-hosts "+p.Masked().String(), "--allow-ip-hosts %q has bits set past its prefix length", v)
	}
	return p, nil
}

// hostPolicy admits what requests ask for through their annotations:
// DNS names matching a pattern, IP addresses inside a range, subject
// extensions when allowed.
type hostPolicy struct {
	patterns        []hostPattern
	ipRanges        []netip.Prefix
	allowExtensions bool
}

// policy builds the signer's policy from the flags: nil when nothing is
// admitted (every annotation is then denied), a usage error for a pattern
// or a range that cannot be used.
func (f *podcertFlags) policy() (podcert.Policy, error) {
	p := &hostPolicy{allowExtensions: f.allowExtensions}
	for _, h := range f.hosts {
		hp, err := parseHostPattern(h)
		if err != nil {
			return nil, err
		}
		p.patterns = append(p.patterns, hp)
	}
	for _, v := range f.ipRanges {
		r, err := parseIPRange(v)
		if err != nil {
			return nil, err
		}
		p.ipRanges = append(p.ipRanges, r)
	}
	if len(p.patterns) == 0 && len(p.ipRanges) == 0 && !p.allowExtensions {
		return nil, nil
	}
	return p, nil
}

// Admit returns nil when everything asked is admitted.
func (p *hostPolicy) Admit(req *podcert.Request, asked podcert.Asked) error {
	if len(asked.Extensions) > 0 && !p.allowExtensions {
		return fmt.Errorf("subject extensions are not admitted (--allow-extensions)")
	}
	for _, ip := range asked.IPAddresses {
		if !p.ipAdmitted(ip) {
			return fmt.Errorf("IP address %s is in no --allow-ip-hosts range", ip)
		}
	}
	for _, name := range asked.DNSNames {
		if !p.nameAdmitted(name, req) {
			return fmt.Errorf("DNS name %q matches no --allow-host pattern", name)
		}
	}
	return nil
}

func (p *hostPolicy) ipAdmitted(ip netip.Addr) bool {
	for _, r := range p.ipRanges {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}

func (p *hostPolicy) nameAdmitted(name string, req *podcert.Request) bool {
	for _, hp := range p.patterns {
		if hp.admits(name, req) {
			return true
		}
	}
	return false
}
