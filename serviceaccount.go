package ksa

import (
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
)

// Names Kubernetes gives to service-account users and groups.
const (
	// UsernamePrefix starts every service-account username:
	// system:serviceaccount:<namespace>:<name>.
	UsernamePrefix = "system:serviceaccount:"
	// AllServiceAccountsGroup is the group every service account belongs to.
	AllServiceAccountsGroup = "system:serviceaccounts"
	// NamespaceGroupPrefix starts the per-namespace group:
	// system:serviceaccounts:<namespace>.
	NamespaceGroupPrefix = "system:serviceaccounts:"
)

// ServiceAccount names a Kubernetes service account. UID is optional: it is
// known when the account comes from a token or the API, and empty when it
// comes from a username.
type ServiceAccount struct {
	Namespace string
	Name      string
	UID       string
}

// Username returns system:serviceaccount:<namespace>:<name>, the username
// Kubernetes gives the account (and the sub claim of its tokens).
func (sa ServiceAccount) Username() string {
	return UsernamePrefix + sa.Namespace + ":" + sa.Name
}

// Groups returns the groups Kubernetes puts every service account in, in
// Kubernetes' order: system:serviceaccounts, then
// system:serviceaccounts:<namespace>. The slice is new on every call.
func (sa ServiceAccount) Groups() []string {
	return []string{AllServiceAccountsGroup, NamespaceGroup(sa.Namespace)}
}

// NamespaceGroup returns system:serviceaccounts:<namespace>.
func NamespaceGroup(namespace string) string {
	return NamespaceGroupPrefix + namespace
}

// Check reports whether the namespace is a DNS-1123 label and the name a
// DNS-1123 subdomain, the rules Kubernetes applies to both objects. The
// error is a *NameError that matches [ErrInvalidName].
func (sa ServiceAccount) Check() error {
	if err := CheckNamespace("namespace", sa.Namespace); err != nil {
		return err
	}
	return CheckObjectName("name", sa.Name)
}

// String returns the username, so a ServiceAccount prints as the identity it
// proves.
func (sa ServiceAccount) String() string { return sa.Username() }

// ParseUsername reads system:serviceaccount:<namespace>:<name> back into a
// ServiceAccount (with an empty UID), with the checks of Kubernetes'
// SplitUsername: the prefix, exactly two colon-separated parts, a valid
// namespace and a valid service-account name. The error names the username,
// matches [ErrInvalidUsername] and, for a bad part, wraps the *[NameError].
func ParseUsername(username string) (ServiceAccount, error) {
	rest, ok := strings.CutPrefix(username, UsernamePrefix)
	if !ok {
		return ServiceAccount{}, usernameError(username, "the prefix is missing", nil)
	}
	namespace, name, ok := strings.Cut(rest, ":")
	if !ok || strings.Contains(name, ":") {
		return ServiceAccount{}, usernameError(username, "want exactly two parts after the prefix", nil)
	}
	sa := ServiceAccount{Namespace: namespace, Name: name}
	if err := sa.Check(); err != nil {
		return ServiceAccount{}, usernameError(username, "", err)
	}
	return sa, nil
}

// usernameError reports a username that is not a valid service-account
// username: why (reason, or the cause), matching [ErrInvalidUsername].
func usernameError(username, reason string, cause error) error {
	msg := "username " + strconv.Quote(username) + " is not " + UsernamePrefix + "<namespace>:<name>"
	if reason != "" {
		msg += ": " + reason
	}
	return errs.Wrap(prefix, ErrInvalidUsername, msg, cause)
}

// MatchesUsername reports whether username is exactly the username of the
// service account namespace/name, without allocating.
func MatchesUsername(namespace, name, username string) bool {
	rest, ok := strings.CutPrefix(username, UsernamePrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, namespace)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	return ok && rest == name
}
