package x509sa

import (
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
)

// Reserved organizational-unit entries. Only these two "system:" entries may
// appear in a subject; extensions can never start with the prefix.
const (
	// ReservedPrefix starts every entry this package reserves.
	ReservedPrefix = "system:"
	// PodNamespacePrefix starts the OU naming the pod's namespace:
	// system:pod-namespace=<namespace>.
	PodNamespacePrefix = "system:pod-namespace="
	// PodNamePrefix starts the OU naming the pod: system:pod-name=<name>.
	PodNamePrefix = "system:pod-name="
)

// hasReservedPrefix reports whether s starts with "system:" in any case:
// "SYSTEM:pod-name=x" is as much a forgery attempt as the exact spelling.
func hasReservedPrefix(s string) bool {
	return len(s) >= len(ReservedPrefix) && strings.EqualFold(s[:len(ReservedPrefix)], ReservedPrefix)
}

// checkExtension validates one caller extension. The key is a Kubernetes
// qualified name (an optional DNS-subdomain prefix and '/', then a name of at
// most 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric);
// the value is at most MaxExtensionValueLength bytes of [A-Za-z0-9-._~:/@].
// Neither can contain '=', so key=value splits one way only, and no key can
// start with "system:".
func checkExtension(key, value string) error {
	if hasReservedPrefix(key) {
		return extensionError(key, true, "keys must not start with "+strconv.Quote(ReservedPrefix))
	}
	if !isQualifiedName(key) {
		return extensionError(key, false, "key must be a qualified name ([prefix/]name, name at most 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric)")
	}
	if len(value) > MaxExtensionValueLength {
		return extensionError(key, false, "value is longer than the limit of "+strconv.Itoa(MaxExtensionValueLength)+" bytes")
	}
	for i := 0; i < len(value); i++ {
		if !isValueChar(value[i]) {
			return extensionError(key+"="+value, false, "value may only hold letters, digits and -._~:/@")
		}
	}
	return nil
}

// parseExtension splits an organizational unit that is not a reserved entry
// into a valid key and value.
func parseExtension(ou string) (key, value string, err error) {
	if hasReservedPrefix(ou) {
		return "", "", extensionError(ou, true, "unknown reserved entry")
	}
	key, value, ok := strings.Cut(ou, "=")
	if !ok {
		return "", "", extensionError(ou, false, "extension is not key=value")
	}
	if err := checkExtension(key, value); err != nil {
		return "", "", err
	}
	return key, value, nil
}

// extensionError reports an extension (an organizational unit) that is not
// acceptable. It matches [ErrInvalidSubject], and [ErrReservedExtension]
// when it tries the reserved prefix.
func extensionError(ext string, reserved bool, reason string) error {
	msg := "subject OU " + strconv.Quote(ext) + ": " + reason
	if reserved {
		return wrap(ErrInvalidSubject, msg, ErrReservedExtension)
	}
	return wrap(ErrInvalidSubject, msg, nil)
}

func isValueChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', ':', '/', '@':
		return true
	}
	return false
}

// isQualifiedName agrees with apimachinery's IsQualifiedName (a test holds it
// to that) without regular expressions.
func isQualifiedName(s string) bool {
	name := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		prefix := s[:i]
		name = s[i+1:]
		if prefix == "" || !ksa.IsObjectName(prefix) {
			return false
		}
	}
	if name == "" || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		switch {
		case alnum:
		case (c == '-' || c == '_' || c == '.') && i > 0 && i < len(name)-1:
		default:
			return false
		}
	}
	return true
}
