package x509sa

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// SplitHosts splits serve hosts into DNS names and IP addresses, for the
// subject alternative names of a serving certificate. Parsing is explicit
// and strict:
//
//   - a host that net/netip parses is an IP address: no leading zeros, no
//     brackets, no zone; IPv4-mapped IPv6 addresses become IPv4 (as
//     crypto/x509 writes them anyway); unspecified addresses (0.0.0.0, ::)
//     are refused;
//   - anything else must be a DNS name: at most 253 bytes of dot-separated
//     DNS-1123 labels of 1-63 bytes, lower-cased first; no trailing dot, no
//     wildcard, and a last label that is not all digits (so "010.0.0.1",
//     which net.ParseIP refuses but Kubernetes' ParseIPSloppy reads as an
//     IP, is refused rather than becoming a DNS name).
//
// Duplicates are dropped, keeping the first occurrence; the result keeps the
// input order. At most [MaxHosts] hosts are read. Errors match
// [ErrInvalidHost] or [ErrLimit].
func SplitHosts(hosts []string) (dnsNames []string, ips []netip.Addr, err error) {
	if len(hosts) > MaxHosts {
		return nil, nil, limit("hosts", len(hosts), MaxHosts)
	}
	for _, h := range hosts {
		if addr, perr := netip.ParseAddr(h); perr == nil {
			addr, err = checkIP(h, addr)
			if err != nil {
				return nil, nil, err
			}
			if !slices.Contains(ips, addr) {
				ips = append(ips, addr)
			}
			continue
		}
		name := strings.ToLower(h)
		if reason := checkDNSName(name); reason != "" {
			return nil, nil, hostError(h, reason)
		}
		if !slices.Contains(dnsNames, name) {
			dnsNames = append(dnsNames, name)
		}
	}
	return dnsNames, ips, nil
}

func checkIP(h string, addr netip.Addr) (netip.Addr, error) {
	if addr.Zone() != "" {
		return netip.Addr{}, hostError(h, "IP address zones are not allowed")
	}
	addr = addr.Unmap()
	if addr.IsUnspecified() {
		return netip.Addr{}, hostError(h, "unspecified IP address")
	}
	return addr, nil
}

// checkDNSName returns why name is not an acceptable lower-case DNS name,
// or "".
func checkDNSName(name string) string {
	switch {
	case name == "":
		return "empty host"
	case len(name) > 253:
		return "DNS name is longer than 253 bytes"
	case strings.HasPrefix(name, "*"):
		return "wildcard DNS names are not supported"
	}
	allDigits := false
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			continue
		}
		label := name[start:i]
		if label == "" {
			return "empty DNS label (leading, trailing or double dot)"
		}
		if len(label) > 63 {
			return "DNS label is longer than 63 bytes"
		}
		allDigits = true
		for j := 0; j < len(label); j++ {
			c := label[j]
			switch {
			case '0' <= c && c <= '9':
			case 'a' <= c && c <= 'z':
				allDigits = false
			case c == '-' && j > 0 && j < len(label)-1:
				allDigits = false
			default:
				return "DNS labels hold only a-z, 0-9 and inner '-'"
			}
		}
		start = i + 1
	}
	if allDigits {
		return "looks like an IP address but does not parse as one"
	}
	return ""
}

// checkSANs validates the subject alternative names of a parsed request or
// certificate: the count, no e-mail addresses, DNS names in the form
// SplitHosts writes, IP addresses that are neither unspecified nor
// malformed. URIs are checked by the caller.
func checkSANs(dnsNames, emails []string, ips []net.IP, uris int) ([]netip.Addr, error) {
	if n := len(dnsNames) + len(emails) + len(ips) + uris; n > MaxSANs {
		return nil, limit("SANs", n, MaxSANs)
	}
	if len(emails) > 0 {
		return nil, hostError(emails[0], "e-mail SANs are not allowed")
	}
	for i, name := range dnsNames {
		if reason := checkDNSName(name); reason != "" {
			return nil, hostError(name, reason)
		}
		if slices.Contains(dnsNames[:i], name) {
			return nil, hostError(name, "duplicate DNS SAN")
		}
	}
	var out []netip.Addr
	for _, ip := range ips {
		addr, ok := netip.AddrFromSlice(ip)
		if !ok {
			return nil, hostError(ip.String(), "malformed IP SAN")
		}
		addr, err := checkIP(addr.String(), addr)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, addr) {
			return nil, hostError(addr.String(), "duplicate IP SAN")
		}
		out = append(out, addr)
	}
	return out, nil
}

func toNetIPs(addrs []netip.Addr) []net.IP {
	if len(addrs) == 0 {
		return nil
	}
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = net.IP(a.AsSlice())
	}
	return out
}

// hostError reports a serve host or SAN that is refused. It matches
// [ErrInvalidHost].
func hostError(host, reason string) error {
	return wrap(ErrInvalidHost, "host "+strconv.Quote(host)+": "+reason, nil)
}
