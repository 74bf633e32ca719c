package ksa

import "strconv"

// Name limits Kubernetes applies.
const (
	// MaxNamespaceLength is the longest namespace name: a DNS-1123 label.
	MaxNamespaceLength = 63
	// MaxObjectNameLength is the longest object name: a DNS-1123 subdomain.
	MaxObjectNameLength = 253
)

// IsNamespace reports whether s is a valid namespace name: a DNS-1123 label
// (at most 63 characters of a-z, 0-9 and '-', starting and ending with a
// letter or digit). It agrees with apimachinery's ValidateNamespaceName
// (a fuzz test holds it to that) without its regular expressions.
func IsNamespace(s string) bool {
	return len(s) <= MaxNamespaceLength && isLabel(s)
}

// IsObjectName reports whether s is a valid name for service accounts,
// pods, secrets and nodes: a DNS-1123 subdomain (at most 253 characters of
// dot-separated DNS-1123 labels). It agrees with apimachinery's
// ValidateServiceAccountName.
func IsObjectName(s string) bool {
	if len(s) > MaxObjectNameLength {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isLabel(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// isLabel checks the DNS-1123 label pattern [a-z0-9]([-a-z0-9]*[a-z0-9])?
// without the length limit, which subdomains do not apply per label.
func isLabel(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// CheckNamespace returns nil when s is a valid namespace name, and
// otherwise a *NameError for field (e.g. "namespace") that says why. It
// matches [ErrInvalidName].
func CheckNamespace(field, s string) error {
	return checkName(field, s, IsNamespace(s), MaxNamespaceLength,
		"must be lower-case letters, digits and '-', starting and ending with a letter or digit")
}

// CheckObjectName returns nil when s is a valid name for a service
// account, pod, secret or node, and otherwise a *NameError for field (e.g.
// "name", "pod name") that says why. It matches [ErrInvalidName].
func CheckObjectName(field, s string) error {
	return checkName(field, s, IsObjectName(s), MaxObjectNameLength,
		"must be dot-separated parts of lower-case letters, digits and '-', each starting and ending with a letter or digit")
}

// checkName says why s, which valid says is or is not a valid name, breaks
// the rule: empty, too long, or else the characters.
func checkName(field, s string, valid bool, max int, rule string) error {
	switch {
	case valid:
		return nil
	case s == "":
		rule = "must not be empty"
	case len(s) > max:
		rule = "must be at most " + strconv.Itoa(max) + " characters"
	}
	return &NameError{Field: field, Value: s, Reason: rule}
}
