package x509sa

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
)

// spiffeScheme starts every SPIFFE ID.
const spiffeScheme = "spiffe://"

// SPIFFEID is a SPIFFE ID, spiffe://<trust domain><path>, as the SPIFFE ID
// standard defines it. The zero value is "no SPIFFE ID".
type SPIFFEID struct {
	// TrustDomain is the lower-case trust domain name.
	TrustDomain string
	// Path is empty (the trust domain itself) or starts with '/'.
	Path string
}

// NewSPIFFEID returns spiffe://<trustDomain>/ns/<namespace>/sa/<name>, the
// SPIFFE ID convention for a Kubernetes service account. The trust domain
// must be valid (see [CheckTrustDomain]) and the service account valid.
func NewSPIFFEID(trustDomain string, sa ksa.ServiceAccount) (SPIFFEID, error) {
	if err := CheckTrustDomain(trustDomain); err != nil {
		return SPIFFEID{}, err
	}
	if err := sa.Check(); err != nil {
		return SPIFFEID{}, spiffeError(spiffeScheme+trustDomain+"/ns/"+sa.Namespace+"/sa/"+sa.Name, "invalid service account", err)
	}
	// At most 9+255+4+63+4+253 = 588 bytes, well within MaxSPIFFEIDLength.
	return SPIFFEID{TrustDomain: trustDomain, Path: "/ns/" + sa.Namespace + "/sa/" + sa.Name}, nil
}

// ParseSPIFFEID parses a SPIFFE ID with the rules of the SPIFFE ID standard
// (the same go-spiffe's spiffeid.FromString enforces): the exact scheme
// "spiffe://"; a non-empty trust domain of [a-z0-9.-_] at most
// [MaxTrustDomainLength] bytes (no user info, port or upper case); a path
// that is empty or made of '/'-led segments of [a-zA-Z0-9.-_], none empty,
// "." or "..", with no trailing slash; no percent-encoding, query or
// fragment; at most [MaxSPIFFEIDLength] bytes. The error matches
// [ErrInvalidSPIFFEID] and names the rule broken.
func ParseSPIFFEID(s string) (SPIFFEID, error) {
	fail := func(reason string) (SPIFFEID, error) {
		return SPIFFEID{}, spiffeError(s, reason, nil)
	}
	if s == "" {
		return fail("cannot be empty")
	}
	if len(s) > MaxSPIFFEIDLength {
		return fail("longer than " + strconv.Itoa(MaxSPIFFEIDLength) + " bytes")
	}
	rest, ok := strings.CutPrefix(s, spiffeScheme)
	if !ok {
		return fail("scheme is missing or invalid")
	}
	td, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		td, path = rest[:i], rest[i:]
	}
	if reason := checkTrustDomain(td); reason != "" {
		return fail(reason)
	}
	if reason := checkSPIFFEPath(path); reason != "" {
		return fail(reason)
	}
	return SPIFFEID{TrustDomain: td, Path: path}, nil
}

// CheckTrustDomain reports whether td is a valid SPIFFE trust domain
// name: non-empty, at most [MaxTrustDomainLength] bytes of lower-case
// letters, digits, '.', '-' and '_'. The error matches
// [ErrInvalidSPIFFEID].
func CheckTrustDomain(td string) error {
	if reason := checkTrustDomain(td); reason != "" {
		return spiffeError(spiffeScheme+td, reason, nil)
	}
	return nil
}

func checkTrustDomain(td string) string {
	if td == "" {
		return "trust domain is missing"
	}
	if len(td) > MaxTrustDomainLength {
		return "trust domain is longer than " + strconv.Itoa(MaxTrustDomainLength) + " bytes"
	}
	for i := 0; i < len(td); i++ {
		c := td[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores"
		}
	}
	return ""
}

func checkSPIFFEPath(path string) string {
	if path == "" {
		return ""
	}
	if path[0] != '/' {
		return "path must have a leading slash"
	}
	start := 1
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			c := path[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
				return "path segment characters are limited to letters, numbers, dots, dashes, and underscores"
			}
			continue
		}
		switch seg := path[start:i]; seg {
		case "":
			if i == len(path) {
				return "path cannot have a trailing slash"
			}
			return "path cannot contain empty segments"
		case ".", "..":
			return "path cannot contain dot segments"
		}
		start = i + 1
	}
	return ""
}

// String returns the ID in its URI form, or "" for the zero value.
func (id SPIFFEID) String() string {
	if id.IsZero() {
		return ""
	}
	return spiffeScheme + id.TrustDomain + id.Path
}

// IsZero reports whether id is the zero value (no SPIFFE ID).
func (id SPIFFEID) IsZero() bool { return id.TrustDomain == "" && id.Path == "" }

// URL returns the ID as a URL for a certificate's URIs, or nil for the zero
// value.
func (id SPIFFEID) URL() *url.URL {
	if id.IsZero() {
		return nil
	}
	return &url.URL{Scheme: "spiffe", Host: id.TrustDomain, Path: id.Path}
}

// ServiceAccount reads the service account from a path of the form
// /ns/<namespace>/sa/<name>, with valid namespace and name. The UID is empty.
// The error matches [ErrInvalidSPIFFEID] (and wraps the *ksa.NameError of a
// bad name).
func (id SPIFFEID) ServiceAccount() (ksa.ServiceAccount, error) {
	rest, ok := strings.CutPrefix(id.Path, "/ns/")
	if !ok {
		return ksa.ServiceAccount{}, spiffeError(id.String(), "path is not /ns/<namespace>/sa/<name>", nil)
	}
	ns, name, ok := strings.Cut(rest, "/sa/")
	if !ok || strings.Contains(name, "/") {
		return ksa.ServiceAccount{}, spiffeError(id.String(), "path is not /ns/<namespace>/sa/<name>", nil)
	}
	sa := ksa.ServiceAccount{Namespace: ns, Name: name}
	if err := sa.Check(); err != nil {
		return ksa.ServiceAccount{}, spiffeError(id.String(), "invalid service account", err)
	}
	return sa, nil
}

// spiffeFromURIs reads the SPIFFE ID of a request or certificate: no URI SAN
// gives the zero ID; one must be a valid SPIFFE ID naming sa (namespace and
// name); more than one, or any other URI, is refused as the X509-SVID
// standard requires.
func spiffeFromURIs(uris []*url.URL, sa ksa.ServiceAccount) (SPIFFEID, error) {
	switch len(uris) {
	case 0:
		return SPIFFEID{}, nil
	case 1:
	default:
		return SPIFFEID{}, spiffeError(uris[0].String(), "more than one URI SAN", nil)
	}
	if uris[0] == nil {
		return SPIFFEID{}, spiffeError("", "empty URI SAN", nil)
	}
	id, err := ParseSPIFFEID(uris[0].String())
	if err != nil {
		return SPIFFEID{}, err
	}
	got, err := id.ServiceAccount()
	if err != nil {
		return SPIFFEID{}, err
	}
	if got.Namespace != sa.Namespace || got.Name != sa.Name {
		return SPIFFEID{}, spiffeError(id.String(), "names another service account than the subject "+sa.Username(), nil)
	}
	return id, nil
}

// spiffeError reports an invalid SPIFFE ID or trust domain. It matches
// [ErrInvalidSPIFFEID] and wraps cause (a *ksa.NameError for a service
// account that is not valid).
func spiffeError(id, reason string, cause error) error {
	return wrap(ErrInvalidSPIFFEID, "SPIFFE ID "+strconv.Quote(id)+": "+reason, cause)
}
