package base

import (
	"errors"
	"regexp"
	"sort"
	"strings"

	"github.com/ksa-go/ksa"
)

// configProblem is what a library's configuration error says: the Go field
// at fault, why, and the cause.
type configProblem struct {
	Field, Reason string
	cause         error
}

// AsConfigProblem reads a configuration error of any package the command
// uses.
func AsConfigProblem(err error) (configProblem, bool) {
	var lc *ksa.ConfigError
	if !errors.As(err, &lc) {
		return configProblem{}, false
	}
	// The field is qualified by its package: "podcert.SignerConfig.Chain".
	_, field, _ := strings.Cut(lc.Field, ".")
	return configProblem{field, lc.Reason, lc.Err}, true
}

// FlagFor names, for one command, the flag that sets each Go field a
// library's configuration error may name ("RingConfig.MaxTokenLifetime":
// "--max-token-lifetime"); a field is matched exactly or as a prefix
// ("RingConfig.Keys" matches "RingConfig.Keys[0]").
type FlagFor map[string]string

// Flag returns the flag of a field, the longest prefix winning; a field
// qualified by its configuration type ("SignerConfig.Chain") also matches
// the table's unqualified name ("Chain").
func (m FlagFor) Flag(field string) (string, bool) {
	if fl, ok := m.prefixFlag(field); ok {
		return fl, true
	}
	if typ, rest, ok := strings.Cut(field, "."); ok && (strings.HasSuffix(typ, "Config") || strings.HasSuffix(typ, "Options")) {
		return m.prefixFlag(rest)
	}
	return "", false
}

// prefixFlag returns the flag of the longest table name field starts with.
func (m FlagFor) prefixFlag(field string) (string, bool) {
	best, flag := -1, ""
	for f, fl := range m {
		if strings.HasPrefix(field, f) && len(f) > best {
			best, flag = len(f), fl
		}
	}
	return flag, best >= 0
}

// Words replaces every Go name of the table in s (a whole word, CamelCase
// or dotted: "MaxLifetime", not "CA", which is also an English word) with
// its flag, longest first.
func (m FlagFor) Words(s string) string {
	fields := make([]string, 0, len(m))
	for f := range m {
		if isGoName(f) {
			fields = append(fields, f)
		}
	}
	sort.Slice(fields, func(i, j int) bool { return len(fields[i]) > len(fields[j]) })
	for _, f := range fields {
		s = regexp.MustCompile(`\b`+regexp.QuoteMeta(f)+`(\[\d+\])?\b`).ReplaceAllLiteralString(s, m[f])
	}
	return s
}

// isGoName reports whether a field name reads as Go rather than English:
// dotted, or with a lower-case letter followed by an upper-case one.
func isGoName(f string) bool {
	if strings.Contains(f, ".") {
		return true
	}
	for i := 1; i < len(f); i++ {
		if f[i-1] >= 'a' && f[i-1] <= 'z' && f[i] >= 'A' && f[i] <= 'Z' {
			return true
		}
	}
	return false
}

// ConfigError turns a library's configuration error into a usage error in
// the command's words: the flag instead of the Go field, the flag named in
// the fix. help is the command's path, e.g. "ksa podcert rbac". Another
// error is returned as a failure with the cause's words only.
func ConfigError(err error, flags FlagFor, help string) error {
	p, ok := AsConfigProblem(err)
	if !ok {
		return Fail(nil, "see '"+help+" --help'", "%s", BoundReason(ksa.ErrorText(err)))
	}
	reason := flags.Words(p.Reason)
	if c := ksa.ErrorText(p.cause); c != "" {
		reason += ": " + flags.Words(c)
	}
	flag, ok := flags.Flag(p.Field)
	if !ok {
		return Usage("see '"+help+" --help'", "a setting is refused: %s", reason)
	}
	return Usage(FlagFix(flag, help), "%s: %s", flag, reason)
}

// CheckNames refuses a namespace, service account or pod name Kubernetes
// refuses, naming the flag.
func CheckNames(namespace, serviceAccount, pod string) error {
	switch {
	case !ksa.IsNamespace(namespace):
		return Usage("give --namespace a namespace name: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit",
			"--namespace %s is not a namespace name", Quoted(namespace))
	case !ksa.IsObjectName(serviceAccount):
		return Usage("give --service-account a service account name: lower-case DNS labels joined by dots, at most 253 characters",
			"--service-account %s is not a service account name", Quoted(serviceAccount))
	case pod != "" && !ksa.IsObjectName(pod):
		return Usage("give --pod a pod name: lower-case DNS labels joined by dots, at most 253 characters",
			"--pod %s is not a pod name", Quoted(pod))
	}
	return nil
}
