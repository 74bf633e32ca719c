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

// Validate reports whether the subject can be encoded: a valid service
// account, a valid UID if any, a pod name that is a DNS-1123 subdomain if
// any, and valid extensions within the limits. The error is a
// *[SubjectError] (wrapping a *ksa.NameError or an *[ExtensionError] where
// one is the cause) or a *[LimitError].
func (s Subject) Validate() error {
	sa := s.ServiceAccount
	if err := sa.Validate(); err != nil {
		return &SubjectError{Attribute: "CN", Value: sa.Username(), Reason: "invalid service account", Err: err}
	}
	if sa.UID != "" {
		if reason := checkUID(sa.UID); reason != "" {
			return &SubjectError{Attribute: "UID", Value: sa.UID, Reason: reason}
		}
	}
	if s.PodName != "" && !ksa.IsObjectName(s.PodName) {
		return &SubjectError{Attribute: "pod", Value: s.PodName, Reason: "invalid pod name",
			Err: ksa.CheckObjectName("pod name", s.PodName)}
	}
	if len(s.Extensions) > MaxExtensions {
		return &LimitError{What: "extensions", Size: len(s.Extensions), Limit: MaxExtensions}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Extensions)) {
		if err := checkExtension(k, s.Extensions[k]); err != nil {
			return &SubjectError{Attribute: "OU", Value: k, Reason: "invalid extension", Err: err}
		}
	}
	return nil
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
	if err := s.Validate(); err != nil {
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
// Errors are a *[SubjectError] or a *[LimitError].
func DecodeName(name pkix.Name) (Subject, error) {
	names := name.Names
	if len(names) > MaxSubjectAttributes {
		return Subject{}, &LimitError{What: "subject attributes", Size: len(names), Limit: MaxSubjectAttributes}
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
			fail(&SubjectError{Attribute: attributeName(atv.Type), Reason: "value is not a string"})
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
					fail(&SubjectError{Attribute: "O", Value: v, Reason: "duplicate group"})
				}
				allGroup = true
			case strings.HasPrefix(v, ksa.NamespaceGroupPrefix):
				nsGroups++
				nsGroup = v
			default:
				fail(&SubjectError{Attribute: "O", Value: v, Reason: "group is not a service-account group"})
			}
		case isOU(atv.Type):
			switch {
			case strings.HasPrefix(v, PodNamespacePrefix):
				if podNSSet {
					fail(&SubjectError{Attribute: "OU", Value: v, Reason: "duplicate pod namespace"})
				}
				podNSSet, podNS = true, v[len(PodNamespacePrefix):]
			case strings.HasPrefix(v, PodNamePrefix):
				if podSet {
					fail(&SubjectError{Attribute: "OU", Value: v, Reason: "duplicate pod name"})
				}
				podSet, pod = true, v[len(PodNamePrefix):]
			default:
				k, val, err := parseExtension(v)
				if err != nil {
					fail(&SubjectError{Attribute: "OU", Value: v, Reason: "invalid extension", Err: err})
					continue
				}
				if _, dup := ext[k]; dup {
					fail(&SubjectError{Attribute: "OU", Value: v, Reason: "duplicate extension key"})
					continue
				}
				if len(ext) == MaxExtensions {
					fail(&LimitError{What: "extensions", Size: MaxExtensions + 1, Limit: MaxExtensions})
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
			fail(&SubjectError{Attribute: attributeName(atv.Type), Value: v, Reason: "attribute not allowed in an identity subject"})
		}
	}

	switch {
	case cnCount == 0:
		return Subject{}, &SubjectError{Attribute: "CN", Reason: "missing", Err: ErrNotServiceAccount}
	case !strings.HasPrefix(cn, ksa.UsernamePrefix):
		return Subject{}, &SubjectError{Attribute: "CN", Value: cn, Reason: "not a service-account username", Err: ErrNotServiceAccount}
	case cnCount > 1:
		return Subject{}, &SubjectError{Attribute: "CN", Value: cn, Reason: "more than one common name"}
	}
	sa, err := ksa.ParseUsername(cn)
	if err != nil {
		return Subject{}, &SubjectError{Attribute: "CN", Value: cn, Reason: "invalid service-account username", Err: err}
	}
	if first != nil {
		return Subject{}, first
	}
	if !allGroup {
		return Subject{}, &SubjectError{Attribute: "O", Value: ksa.AllServiceAccountsGroup, Reason: "missing group"}
	}
	want := ksa.NamespaceGroup(sa.Namespace)
	switch {
	case nsGroups == 0:
		return Subject{}, &SubjectError{Attribute: "O", Value: want, Reason: "missing group"}
	case nsGroups > 1:
		return Subject{}, &SubjectError{Attribute: "O", Value: nsGroup, Reason: "more than one namespace group"}
	case nsGroup != want:
		return Subject{}, &SubjectError{Attribute: "O", Value: nsGroup, Reason: "group of another namespace"}
	}
	s := Subject{ServiceAccount: sa, Extensions: ext}
	if podNSSet != podSet {
		return Subject{}, &SubjectError{Attribute: "OU", Reason: "pod namespace and pod name must appear together"}
	}
	if podSet {
		if podNS != sa.Namespace {
			return Subject{}, &SubjectError{Attribute: "OU", Value: PodNamespacePrefix + podNS, Reason: "pod namespace differs from the service account's"}
		}
		if !ksa.IsObjectName(pod) {
			return Subject{}, &SubjectError{Attribute: "pod", Value: pod, Reason: "invalid pod name",
				Err: ksa.CheckObjectName("pod name", pod)}
		}
		s.PodName = pod
	}
	switch {
	case uidCount > 1:
		return Subject{}, &SubjectError{Attribute: "UID", Value: uid, Reason: "more than one UID"}
	case uidCount == 1:
		if reason := checkUID(uid); reason != "" {
			return Subject{}, &SubjectError{Attribute: "UID", Value: uid, Reason: reason}
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
