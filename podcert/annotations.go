package podcert

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/x509sa"
)

// Annotation keys this package reads from spec.unverifiedUserAnnotations,
// the successors of the X.509 service-account proposal's serveHosts and
// extensions. A pod author sets them on the podCertificate projection;
// nothing in them is verified by Kubernetes, so a [Policy] decides.
const (
	// DefaultServeHostsKey asks for serving hosts: a comma-separated list
	// of DNS names and IP addresses (x509sa.SplitHosts' rules), issued as
	// DNS and IP SANs.
	DefaultServeHostsKey = "ksa-go.github.io/serve-hosts"
	// DefaultExtensionsKey asks for subject extensions: a comma-separated
	// list of key=value entries (x509sa.Subject's rules), issued as OU
	// entries after the pod's.
	DefaultExtensionsKey = "ksa-go.github.io/extensions"
	// MaxAnnotationsSize bounds the annotations read, keys and values
	// together, in bytes. kube-apiserver allows
	// [MaxUnverifiedUserAnnotationsSize]; a request asking for more than
	// this is denied before any parsing.
	MaxAnnotationsSize = 16 << 10
)

// Asked is what a request asks for through its annotations, parsed and
// checked for form, not yet admitted.
type Asked struct {
	// DNSNames and IPAddresses are the serving hosts, deduplicated, in
	// the order asked.
	DNSNames    []string
	IPAddresses []netip.Addr
	// Extensions are the subject extensions.
	Extensions map[string]string
}

// IsZero reports whether nothing is asked for.
func (a Asked) IsZero() bool {
	return len(a.DNSNames) == 0 && len(a.IPAddresses) == 0 && len(a.Extensions) == 0
}

// Hosts returns the DNS names and then the IP addresses, as strings.
func (a Asked) Hosts() []string {
	out := make([]string, 0, len(a.DNSNames)+len(a.IPAddresses))
	out = append(out, a.DNSNames...)
	for _, ip := range a.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

// Policy admits what a request asks for through its annotations. Admit
// returns nil to issue everything asked, or an error (wrapped in one
// matching [ErrAnnotation]) to deny the request with the reason
// InvalidUnverifiedUserAnnotations. It is called only when something is
// asked, and must be safe for concurrent use.
type Policy interface {
	Admit(req *Request, asked Asked) error
}

// PolicyFunc adapts a function to a [Policy].
type PolicyFunc func(req *Request, asked Asked) error

// Admit calls f.
func (f PolicyFunc) Admit(req *Request, asked Asked) error { return f(req, asked) }

// parseAnnotations reads the annotations with the two keys; any other key
// is refused, as Kubernetes asks signers to do.
func parseAnnotations(ann map[string]string, hostsKey, extKey string) (Asked, error) {
	var asked Asked
	size := 0
	for k, v := range ann {
		size += len(k) + len(v)
	}
	if size > MaxAnnotationsSize {
		return asked, annotationError("", "too large", limit("annotation bytes", size, MaxAnnotationsSize))
	}
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		v := ann[k]
		switch k {
		case hostsKey:
			hosts := splitList(v)
			if len(hosts) == 0 {
				return asked, annotationError(k, "empty host list", nil)
			}
			dns, ips, err := x509sa.SplitHosts(hosts)
			if err != nil {
				return asked, annotationError(k, "invalid host", err)
			}
			asked.DNSNames, asked.IPAddresses = dns, ips
		case extKey:
			entries := splitList(v)
			if len(entries) == 0 {
				return asked, annotationError(k, "empty extension list", nil)
			}
			if len(entries) > x509sa.MaxExtensions {
				return asked, annotationError(k, "too many extensions", limit("extensions", len(entries), x509sa.MaxExtensions))
			}
			asked.Extensions = make(map[string]string, len(entries))
			for _, e := range entries {
				key, val, ok := strings.Cut(e, "=")
				if !ok {
					return asked, annotationError(k, "extension "+strconv.Quote(e)+" is not key=value", nil)
				}
				if _, dup := asked.Extensions[key]; dup {
					return asked, annotationError(k, "extension key "+strconv.Quote(key)+" given twice", nil)
				}
				asked.Extensions[key] = val
			}
		default:
			return asked, annotationError(k, "unknown key", nil)
		}
	}
	return asked, nil
}

// splitList splits a comma-separated list, trimming spaces and dropping
// empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// annotationError reports an unverifiedUserAnnotations entry (key, or ""
// for the annotations as a whole) that is not honoured. It matches
// [ErrAnnotation] and wraps cause (an x509sa host or subject error, or
// the policy's error), if any.
func annotationError(key, reason string, cause error) error {
	if key == "" {
		return wrap(ErrAnnotation, "unverified user annotations: "+reason, cause)
	}
	return wrap(ErrAnnotation, "unverified user annotation "+strconv.Quote(key)+": "+reason, cause)
}
