package cli

import (
	"errors"
	"regexp"
	"sort"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
	"github.com/ksa-go/ksa/x509sa"
)

// configProblem is what a library's configuration error says: the Go field
// at fault, why, and the cause.
type configProblem struct {
	field, reason string
	cause         error
}

// asConfigProblem reads a configuration error of any package the command
// uses.
func asConfigProblem(err error) (configProblem, bool) {
	var lc *ksa.ConfigError
	if !errors.As(err, &lc) {
		return configProblem{}, false
	}
	// The field is qualified by its package: "podcert.SignerConfig.Chain".
	_, field, _ := strings.Cut(lc.Field, ".")
	return configProblem{field, lc.Reason, lc.Err}, true
}

// flagFor names, for one command, the flag that sets each Go field a
// library's configuration error may name ("RingConfig.MaxTokenLifetime":
// "--max-token-lifetime"); a field is matched exactly or as a prefix
// ("RingConfig.Keys" matches "RingConfig.Keys[0]").
type flagFor map[string]string

// flag returns the flag of a field, the longest prefix winning; a field
// qualified by its configuration type ("SignerConfig.Chain") also matches
// the table's unqualified name ("Chain").
func (m flagFor) flag(field string) (string, bool) {
	if fl, ok := m.prefixFlag(field); ok {
		return fl, true
	}
	if typ, rest, ok := strings.Cut(field, "."); ok && (strings.HasSuffix(typ, "Config") || strings.HasSuffix(typ, "Options")) {
		return m.prefixFlag(rest)
	}
	return "", false
}

// prefixFlag returns the flag of the longest table name field starts with.
func (m flagFor) prefixFlag(field string) (string, bool) {
	best, flag := -1, ""
	for f, fl := range m {
		if strings.HasPrefix(field, f) && len(f) > best {
			best, flag = len(f), fl
		}
	}
	return flag, best >= 0
}

// words replaces every Go name of the table in s (a whole word, CamelCase
// or dotted: "MaxLifetime", not "CA", which is also an English word) with
// its flag, longest first.
func (m flagFor) words(s string) string {
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

// configError turns a library's configuration error into a usage error in
// the command's words: the flag instead of the Go field, the flag named in
// the fix. help is the command's path, e.g. "ksa podcert rbac". Another
// error is returned as a failure with the cause's words only.
func configError(err error, flags flagFor, help string) error {
	p, ok := asConfigProblem(err)
	if !ok {
		return fail(nil, "see '"+help+" --help'", "%s", boundReason(ksa.ErrorText(err)))
	}
	reason := flags.words(p.reason)
	if c := ksa.ErrorText(p.cause); c != "" {
		reason += ": " + flags.words(c)
	}
	flag, ok := flags.flag(p.field)
	if !ok {
		return usage("see '"+help+" --help'", "a setting is refused: %s", reason)
	}
	return usage(flagFix(flag, help), "%s: %s", flag, reason)
}

// checkNames refuses a namespace, service account or pod name Kubernetes
// refuses, naming the flag.
func checkNames(namespace, serviceAccount, pod string) error {
	switch {
	case !ksa.IsNamespace(namespace):
		return usage("give --namespace a namespace name: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit",
			"--namespace %s is not a namespace name", quoted(namespace))
	case !ksa.IsObjectName(serviceAccount):
		return usage("give --service-account a service account name: lower-case DNS labels joined by dots, at most 253 characters",
			"--service-account %s is not a service account name", quoted(serviceAccount))
	case pod != "" && !ksa.IsObjectName(pod):
		return usage("give --pod a pod name: lower-case DNS labels joined by dots, at most 253 characters",
			"--pod %s is not a pod name", quoted(pod))
	}
	return nil
}

// csrError explains why a certificate request cannot be made, naming the
// flag at fault.
func csrError(err error) error {
	if _, ok := asConfigProblem(err); ok {
		return configError(err, flagFor{"Lifetime": "--lifetime", "Name": "--name", "SignerName": "--signer-name",
			"Usage": "--usage", "TrustDomain": "--trust-domain", "Hosts": "--host"}, "ksa x509 csr")
	}
	flag := ""
	switch {
	case errors.Is(err, x509sa.ErrInvalidSignerName):
		flag = "--signer-name"
	case errors.Is(err, x509sa.ErrInvalidSPIFFEID):
		flag = "--trust-domain"
	case errors.Is(err, x509sa.ErrInvalidHost), errors.Is(err, x509sa.ErrLimit):
		flag = "--host"
	case errors.Is(err, x509sa.ErrLifetime):
		flag = "--lifetime"
	case errors.Is(err, x509sa.ErrInvalidUsage):
		flag = "--usage"
	case errors.Is(err, jwks.ErrUnsupportedKey):
		flag = "--key"
	case errors.Is(err, x509sa.ErrInvalidSubject):
		flag = subjectFlag(ksa.ErrorText(err))
	}
	msg := flagFor{"ServerAuth": "--usage server", "ClientAuth": "--usage client"}.words(ksa.ErrorText(err))
	if flag == "" {
		return fail(nil, "check the flags (see 'ksa x509 csr --help')", "%s", msg)
	}
	return usage(flagFix(flag, "ksa x509 csr"), "%s", msg)
}

// mintError explains why a token cannot be minted, naming the flag at
// fault.
func mintError(err error) error {
	if _, ok := asConfigProblem(err); ok {
		return configError(err, flagFor{"MinterConfig.Issuer": "--issuer", "MinterConfig.Signer": "--signing-key"}, "ksa token mint")
	}
	var req *tokens.RequestError
	if !errors.As(err, &req) {
		return fail(nil, "check the flags (see 'ksa token mint --help')", "%s", ksa.ErrorText(err))
	}
	flag, ok := flagFor{"serviceAccount.uid": "--uid", "uid": "--uid", "serviceAccount": "--namespace and --service-account",
		"spec.expirationSeconds": "--duration (10m to 2^32 s)", "spec.audiences": "--audience", "spec.boundObjectRef": "--pod and --pod-uid",
		"node": "--node and --node-uid"}.flag(req.Field)
	if !ok {
		flag = "the flags"
	}
	return usage("see 'ksa token mint --help' and fix "+flag, "%s", ksa.ErrorText(err))
}

// subjectFlag names the flag behind a subject the library refused, from
// the attribute its message names first.
func subjectFlag(msg string) string {
	switch {
	case strings.Contains(msg, "UID"):
		return "--uid"
	case strings.Contains(msg, "pod"):
		return "--pod"
	}
	return "--namespace and --service-account"
}
