package x509sa

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
)

// Subject is the identity a certificate subject carries, laid out as
// kube-apiserver reads it:
//
//	# attribute  value
//	CN  system:serviceaccount:<namespace>:<name>     (the username)
//	O   system:serviceaccounts                       (the groups)
//	O   system:serviceaccounts:<namespace>
//	OU  system:pod-namespace=<namespace>             (only with a pod)
//	OU  system:pod-name=<pod>
//	OU  <key>=<value>                                (one per extension)
//	1.3.6.1.4.1.57683.2  <service-account UID>       (only with a UID)
//
// kube-apiserver's x509 authenticator takes the username from CN, the groups
// from O and the UID from the 1.3.6.1.4.1.57683.2 attribute; it ignores OU,
// so the pod and the extensions are for this package's own readers.
//
// The zero value is not a valid subject: the service account is required.
type Subject struct {
	// ServiceAccount is the identity. Namespace and Name are required; UID
	// is optional and, when set, is carried in the attribute kube-apiserver
	// reads (at most [MaxUIDLength] bytes of letters, digits and -._:).
	ServiceAccount ksa.ServiceAccount
	// PodName names the pod, in the service account's namespace, the
	// certificate is issued to; empty for none. The pod's UID has no place
	// in the subject.
	PodName string
	// Extensions are the caller's key=value entries, at most
	// [MaxExtensions]. Keys are Kubernetes qualified names and can never
	// start with "system:"; values are at most [MaxExtensionValueLength]
	// bytes of letters, digits and -._~:/@. Nil and empty are the same.
	Extensions map[string]string
}

// oidIs reports whether oid is the given arcs; the variadic slice stays on
// the stack, so comparisons do not allocate.
func oidIs(oid asn1.ObjectIdentifier, arcs ...int) bool {
	return slices.Equal(oid, arcs)
}

func isCN(oid asn1.ObjectIdentifier) bool  { return oidIs(oid, 2, 5, 4, 3) }
func isO(oid asn1.ObjectIdentifier) bool   { return oidIs(oid, 2, 5, 4, 10) }
func isOU(oid asn1.ObjectIdentifier) bool  { return oidIs(oid, 2, 5, 4, 11) }
func isUID(oid asn1.ObjectIdentifier) bool { return oidIs(oid, 1, 3, 6, 1, 4, 1, 57683, 2) }

// UIDAttribute returns the OID of the subject attribute kube-apiserver reads
// the user's UID from, 1.3.6.1.4.1.57683.2 (under the CNCF enterprise number
// allocated to Kubernetes). The slice is new on every call.
func UIDAttribute() asn1.ObjectIdentifier {
	return asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57683, 2}
}

// Check reports whether the subject can be encoded: a valid service
// account, a valid UID if any, a pod name that is a DNS-1123 subdomain if
// any, and valid extensions within the limits. The error matches
// [ErrInvalidSubject] (and wraps the *ksa.NameError of a bad name, or
// matches [ErrReservedExtension] for a forged entry) or [ErrLimit].
func (s Subject) Check() error {
	sa := s.ServiceAccount
	if err := sa.Check(); err != nil {
		return subjectError("CN", sa.Username(), "invalid service account", err)
	}
	if sa.UID != "" {
		if reason := checkUID(sa.UID); reason != "" {
			return subjectError("UID", sa.UID, reason, nil)
		}
	}
	if s.PodName != "" && !ksa.IsObjectName(s.PodName) {
		return subjectError("pod", s.PodName, "invalid pod name", ksa.CheckObjectName("pod name", s.PodName))
	}
	if len(s.Extensions) > MaxExtensions {
		return limit("extensions", len(s.Extensions), MaxExtensions)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Extensions)) {
		if err := checkExtension(k, s.Extensions[k]); err != nil {
			return err
		}
	}
	return nil
}

// subjectError reports a subject attribute that does not carry, or cannot
// encode, a valid identity. It matches [ErrInvalidSubject] and wraps
// cause; reason may be empty when the cause says it.
func subjectError(attr, value, reason string, cause error) error {
	msg := "subject " + attr
	if value != "" {
		msg += " " + strconv.Quote(value)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return wrap(ErrInvalidSubject, msg, cause)
}

// checkUID returns why uid cannot be carried, or "".
func checkUID(uid string) string {
	if uid == "" {
		return "UID must not be empty"
	}
	if len(uid) > MaxUIDLength {
		return "UID is longer than " + strconv.Itoa(MaxUIDLength) + " bytes"
	}
	for i := 0; i < len(uid); i++ {
		c := uid[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == ':'
		if !ok {
			return "UID may only hold letters, digits and -._:"
		}
	}
	return ""
}

// Name validates the subject and returns it as a pkix.Name for a
// certificate or request template: CommonName, Organization,
// OrganizationalUnit (pod entries first, then extensions sorted by key) and,
// with a UID, one ExtraNames attribute of type [UIDAttribute]. DER sorts the
// values of each multi-valued attribute, so decoders compare them as sets.
func (s Subject) Name() (pkix.Name, error) {
	if err := s.Check(); err != nil {
		return pkix.Name{}, err
	}
	sa := s.ServiceAccount
	ou := make([]string, 0, 2+len(s.Extensions))
	if s.PodName != "" {
		ou = append(ou, PodNamespacePrefix+sa.Namespace, PodNamePrefix+s.PodName)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Extensions)) {
		ou = append(ou, k+"="+s.Extensions[k])
	}
	n := pkix.Name{CommonName: sa.Username(), Organization: sa.Groups()}
	if len(ou) > 0 {
		n.OrganizationalUnit = ou
	}
	if sa.UID != "" {
		n.ExtraNames = []pkix.AttributeTypeAndValue{{Type: UIDAttribute(), Value: sa.UID}}
	}
	return n, nil
}

// Identity returns the identity the subject proves: the service account and,
// when named, the pod (without a UID). Certificates add their credential ID
// (see [Certificate.Identity]).
func (s Subject) Identity() ksa.Identity {
	return ksa.Identity{ServiceAccount: s.ServiceAccount, Pod: ksa.ObjectRef{Name: s.PodName}}
}

// UserInfo returns the user kube-apiserver's x509 authenticator derives from
// the subject: the username, UID and groups. The credential-id extra comes
// from the certificate, not the subject (see [Certificate.UserInfo]).
func (s Subject) UserInfo() ksa.UserInfo {
	return s.Identity().UserInfo()
}

// Equal reports whether two subjects carry the same identity and extensions
// (a nil and an empty extension map are equal).
func (s Subject) Equal(o Subject) bool {
	return s.ServiceAccount == o.ServiceAccount && s.PodName == o.PodName && maps.Equal(s.Extensions, o.Extensions)
}

// DecodeName reads the identity back from a parsed subject. It reads
// name.Names, every attribute in the order parsed (crypto/x509 fills it when
// parsing a certificate or request; hand-built names have it empty), and
// fails closed:
//
//   - at most [MaxSubjectAttributes] attributes, all string-valued, of the
//     types CN, O, OU and [UIDAttribute] only;
//   - exactly one CN, a valid service-account username (a missing or
//     non-service-account CN matches [ErrNotServiceAccount]);
//   - O exactly the two service-account groups of that namespace, in any
//     order, each once (so no system:masters or other extra group);
//   - OU: the pod entries together or not at all, the pod namespace equal
//     to the service account's; any other system: entry is reserved
//     ([ErrReservedExtension]); extensions valid, keys unique, at most
//     [MaxExtensions];
//   - at most one UID, non-empty and valid.
//
// Errors match [ErrInvalidSubject] or [ErrLimit].
func DecodeName(name pkix.Name) (Subject, error) {
	names := name.Names
	if len(names) > MaxSubjectAttributes {
		return Subject{}, limit("subject attributes", len(names), MaxSubjectAttributes)
	}
	var (
		first             error // first problem found; reported after the CN
		cn, uid           string
		cnCount, uidCount int
		allGroup          bool
		nsGroup           string
		nsGroups          int
		podNS, pod        string
		podNSSet, podSet  bool
		ext               map[string]string
	)
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, atv := range names {
		v, ok := atv.Value.(string)
		if !ok {
			fail(subjectError(attributeName(atv.Type), "", "value is not a string", nil))
			continue
		}
		switch {
		case isCN(atv.Type):
			cnCount++
			cn = v
		case isO(atv.Type):
			switch {
			case v == ksa.AllServiceAccountsGroup:
				if allGroup {
					fail(subjectError("O", v, "duplicate group", nil))
				}
				allGroup = true
			case strings.HasPrefix(v, ksa.NamespaceGroupPrefix):
				nsGroups++
				nsGroup = v
			default:
				fail(subjectError("O", v, "group is not a service-account group", nil))
			}
		case isOU(atv.Type):
			switch {
			case strings.HasPrefix(v, PodNamespacePrefix):
				if podNSSet {
					fail(subjectError("OU", v, "duplicate pod namespace", nil))
				}
				podNSSet, podNS = true, v[len(PodNamespacePrefix):]
			case strings.HasPrefix(v, PodNamePrefix):
				if podSet {
					fail(subjectError("OU", v, "duplicate pod name", nil))
				}
				podSet, pod = true, v[len(PodNamePrefix):]
			default:
				k, val, err := parseExtension(v)
				if err != nil {
					fail(err)
					continue
				}
				if _, dup := ext[k]; dup {
					fail(subjectError("OU", v, "duplicate extension key", nil))
					continue
				}
				if len(ext) == MaxExtensions {
					fail(limit("extensions", MaxExtensions+1, MaxExtensions))
					continue
				}
				if ext == nil {
					ext = make(map[string]string, 4)
				}
				ext[k] = val
			}
		case isUID(atv.Type):
			uidCount++
			uid = v
		default:
			fail(subjectError(attributeName(atv.Type), v, "attribute not allowed in an identity subject", nil))
		}
	}

	switch {
	case cnCount == 0:
		return Subject{}, subjectError("CN", "", "missing", ErrNotServiceAccount)
	case !strings.HasPrefix(cn, ksa.UsernamePrefix):
		return Subject{}, subjectError("CN", cn, "", ErrNotServiceAccount)
	case cnCount > 1:
		return Subject{}, subjectError("CN", cn, "more than one common name", nil)
	}
	sa, err := ksa.ParseUsername(cn)
	if err != nil {
		return Subject{}, subjectError("CN", cn, "invalid service-account username", err)
	}
	if first != nil {
		return Subject{}, first
	}
	if !allGroup {
		return Subject{}, subjectError("O", ksa.AllServiceAccountsGroup, "missing group", nil)
	}
	want := ksa.NamespaceGroup(sa.Namespace)
	switch {
	case nsGroups == 0:
		return Subject{}, subjectError("O", want, "missing group", nil)
	case nsGroups > 1:
		return Subject{}, subjectError("O", nsGroup, "more than one namespace group", nil)
	case nsGroup != want:
		return Subject{}, subjectError("O", nsGroup, "group of another namespace", nil)
	}
	s := Subject{ServiceAccount: sa, Extensions: ext}
	if podNSSet != podSet {
		return Subject{}, subjectError("OU", "", "pod namespace and pod name must appear together", nil)
	}
	if podSet {
		if podNS != sa.Namespace {
			return Subject{}, subjectError("OU", PodNamespacePrefix+podNS, "pod namespace differs from the service account's", nil)
		}
		if !ksa.IsObjectName(pod) {
			return Subject{}, subjectError("pod", pod, "invalid pod name", ksa.CheckObjectName("pod name", pod))
		}
		s.PodName = pod
	}
	switch {
	case uidCount > 1:
		return Subject{}, subjectError("UID", uid, "more than one UID", nil)
	case uidCount == 1:
		if reason := checkUID(uid); reason != "" {
			return Subject{}, subjectError("UID", uid, reason, nil)
		}
		s.ServiceAccount.UID = uid
	}
	return s, nil
}

// attributeName names an attribute type for errors.
func attributeName(oid asn1.ObjectIdentifier) string {
	switch {
	case isCN(oid):
		return "CN"
	case isO(oid):
		return "O"
	case isOU(oid):
		return "OU"
	case isUID(oid):
		return "UID"
	}
	return oid.String()
}
