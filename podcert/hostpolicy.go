package podcert

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/ksa-go/ksa"
)

// The placeholders of a [HostPolicyConfig] host pattern: the request's
// namespace, service account and pod names.
const (
	PlaceholderNamespace      = "{namespace}"
	PlaceholderServiceAccount = "{serviceaccount}"
	PlaceholderPod            = "{pod}"
)

// HostPolicyConfig is what a [HostPolicy] admits, in the words an
// operator writes (the ksa command's --allow-host, --allow-ip-hosts and
// --allow-extensions). The zero value admits nothing.
type HostPolicyConfig struct {
	// Hosts are DNS name patterns: DNS labels separated by dots, each a
	// literal (compared without regard to case) or a whole placeholder
	// ([PlaceholderNamespace], [PlaceholderServiceAccount],
	// [PlaceholderPod]), which stands for the request's name when that is
	// one non-empty DNS label. A pattern admits the one name it expands
	// to; starting with ".", it admits the names below that one instead.
	// A placeholder joined to other text in a label
	// ("{serviceaccount}-{namespace}") is refused: two requests could
	// expand it to the same name (the service account a-b of namespace c,
	// and a of b-c).
	Hosts []string
	// IPRanges are CIDRs ("10.0.0.0/8", "fd00::/8"): an IP address inside
	// one is admitted. The signer knows no pod's addresses, so any pod of
	// the signer name may get any address of the ranges.
	IPRanges []string
	// AllowExtensions admits subject extensions.
	AllowExtensions bool
}

// HostPolicy is a [Policy] of serving hosts and subject extensions: a DNS
// name matching a host pattern for the request, an IP address inside a
// range, extensions when allowed. It is immutable and safe for
// concurrent use.
type HostPolicy struct {
	patterns        []hostPattern
	ipRanges        []netip.Prefix
	allowExtensions bool
}

// hostPattern is a parsed host pattern: DNS labels, each a literal (lower
// case) or a whole placeholder; with below, it admits the names under it.
type hostPattern struct {
	labels []string
	below  bool
}

// NewHostPolicy parses cfg. A pattern or a range that cannot be used is
// a *ksa.ConfigError naming it (podcert.HostPolicyConfig.Hosts[i] or
// IPRanges[i]), its reason starting with the value, quoted.
func NewHostPolicy(cfg HostPolicyConfig) (*HostPolicy, error) {
	p := &HostPolicy{allowExtensions: cfg.AllowExtensions}
	for i, h := range cfg.Hosts {
		hp, reason := parseHostPattern(h)
		if reason != "" {
			return nil, &ksa.ConfigError{Field: fmt.Sprintf("podcert.HostPolicyConfig.Hosts[%d]", i), Reason: fmt.Sprintf("%q %s", h, reason)}
		}
		p.patterns = append(p.patterns, hp)
	}
	for i, v := range cfg.IPRanges {
		r, reason := parseIPRange(v)
		if reason != "" {
			return nil, &ksa.ConfigError{Field: fmt.Sprintf("podcert.HostPolicyConfig.IPRanges[%d]", i), Reason: fmt.Sprintf("%q %s", v, reason)}
		}
		p.ipRanges = append(p.ipRanges, r)
	}
	return p, nil
}

// parseHostPattern reads a host pattern, or says why it cannot be used.
func parseHostPattern(p string) (hostPattern, string) {
	var hp hostPattern
	rest := strings.ToLower(p)
	if r, ok := strings.CutPrefix(rest, "."); ok {
		hp.below, rest = true, r
	}
	if rest == "" {
		return hp, "has no DNS label"
	}
	for _, label := range strings.Split(rest, ".") {
		switch {
		case label == PlaceholderNamespace, label == PlaceholderServiceAccount, label == PlaceholderPod:
		case strings.ContainsAny(label, "{}"):
			if !strings.HasPrefix(label, "{") || !strings.HasSuffix(label, "}") || strings.Count(label, "{") > 1 {
				return hp, fmt.Sprintf("joins a placeholder to other text in %q: two requests could then get the same name", label)
			}
			return hp, "has the unknown placeholder " + label
		case !isDNSLabel(label):
			return hp, fmt.Sprintf("has %q, which is not a DNS label (letters, digits and '-', at most 63)", label)
		}
		hp.labels = append(hp.labels, label)
	}
	return hp, ""
}

// parseIPRange reads a CIDR, or says why it cannot be used.
func parseIPRange(v string) (netip.Prefix, string) {
	p, err := netip.ParsePrefix(v)
	switch {
	case err != nil:
		if _, err := netip.ParseAddr(v); err == nil {
			return p, "is an address, not a CIDR"
		}
		return p, "is not a CIDR"
	case p != p.Masked():
		return p, "has bits set past its prefix length"
	}
	return p, ""
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
func (hp hostPattern) expand(req *Request) (string, bool) {
	out := make([]string, len(hp.labels))
	for i, label := range hp.labels {
		v := label
		switch label {
		case PlaceholderNamespace:
			v = req.Namespace
		case PlaceholderServiceAccount:
			v = req.ServiceAccountName
		case PlaceholderPod:
			v = req.PodName
		}
		if !isDNSLabel(v) {
			return "", false
		}
		out[i] = strings.ToLower(v)
	}
	return strings.Join(out, "."), true
}

// admits reports whether a lower-case DNS name matches the pattern for a
// request: equal to it, or with below, a name under it.
func (hp hostPattern) admits(name string, req *Request) bool {
	p, ok := hp.expand(req)
	if !ok {
		return false
	}
	if hp.below {
		return strings.HasSuffix(name, "."+p) && len(name) > len(p)+1
	}
	return name == p
}

// AllowHost reports whether the policy admits host, a DNS name (without
// regard to case) or an IP address, as a serving host of a certificate
// for req.
func (p *HostPolicy) AllowHost(req *Request, host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.allowIP(ip)
	}
	return p.allowName(strings.ToLower(host), req)
}

func (p *HostPolicy) allowIP(ip netip.Addr) bool {
	for _, r := range p.ipRanges {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}

func (p *HostPolicy) allowName(name string, req *Request) bool {
	for _, hp := range p.patterns {
		if hp.admits(name, req) {
			return true
		}
	}
	return false
}

// Admit implements [Policy]: nil when every DNS name, IP address and
// extension asked is admitted, else an error naming the first refused.
func (p *HostPolicy) Admit(req *Request, asked Asked) error {
	if len(asked.Extensions) > 0 && !p.allowExtensions {
		return fmt.Errorf("subject extensions are not admitted")
	}
	for _, ip := range asked.IPAddresses {
		if !p.allowIP(ip) {
			return fmt.Errorf("IP address %s is in no allowed range", ip)
		}
	}
	for _, name := range asked.DNSNames {
		if !p.allowName(strings.ToLower(name), req) {
			return fmt.Errorf("DNS name %q matches no allowed host pattern", name)
		}
	}
	return nil
}
