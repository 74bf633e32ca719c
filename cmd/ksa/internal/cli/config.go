package cli

import (
	"errors"
	"sort"
	"strings"

	"github.com/ksa-go/ksa/cmd/ksa/internal/podcertctl"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/podcert"
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
	var (
		pc *podcert.ConfigError
		ec *extsigner.ConfigError
		tc *tokens.ConfigError
		oc *oidc.ConfigError
		xc *x509sa.ConfigError
		cc *credspec.ConfigError
		kc *podcertctl.ConfigError
	)
	switch {
	case errors.As(err, &pc):
		return configProblem{pc.Field, pc.Reason, pc.Err}, true
	case errors.As(err, &ec):
		return configProblem{ec.Field, ec.Reason, ec.Err}, true
	case errors.As(err, &tc):
		return configProblem{tc.Field, tc.Reason, tc.Err}, true
	case errors.As(err, &oc):
		return configProblem{oc.Field, oc.Reason, oc.Err}, true
	case errors.As(err, &xc):
		return configProblem{xc.Field, xc.Reason, xc.Err}, true
	case errors.As(err, &cc):
		return configProblem{cc.Field, cc.Reason, cc.Err}, true
	case errors.As(err, &kc):
		return configProblem{kc.Field, kc.Reason, nil}, true
	}
	return configProblem{}, false
}

// flagFor names, for one command, the flag that sets each Go field a
// library's configuration error may name ("RingConfig.MaxTokenLifetime":
// "--max-token-lifetime"); a field is matched exactly or as a prefix
// ("RingConfig.Keys" matches "RingConfig.Keys[0]").
type flagFor map[string]string

// flag returns the flag of a field, the longest prefix winning.
func (m flagFor) flag(field string) (string, bool) {
	best, flag := -1, ""
	for f, fl := range m {
		if strings.HasPrefix(field, f) && len(f) > best {
			best, flag = len(f), fl
		}
	}
	return flag, best >= 0
}

// words replaces every field name in s with its flag, longest first.
func (m flagFor) words(s string) string {
	fields := make([]string, 0, len(m))
	for f := range m {
		fields = append(fields, f)
	}
	sort.Slice(fields, func(i, j int) bool { return len(fields[i]) > len(fields[j]) })
	for _, f := range fields {
		s = strings.ReplaceAll(s, f, m[f])
	}
	return s
}

// configError turns a library's configuration error into a usage error in
// the command's words: the flag instead of the Go field, the flag named in
// the fix. help is the command's path, e.g. "ksa podcert rbac". Another
// error is returned as a failure with the cause's words only.
func configError(err error, flags flagFor, help string) error {
	p, ok := asConfigProblem(err)
	if !ok {
		return fail(nil, "see '"+help+" --help'", "%s", boundReason(libText(err)))
	}
	reason := flags.words(p.reason)
	if c := libText(p.cause); c != "" {
		reason += ": " + flags.words(c)
	}
	flag, ok := flags.flag(p.field)
	if !ok {
		return usage("see '"+help+" --help'", "a setting is refused: %s", reason)
	}
	return usage("fix "+flag+" (see '"+help+" --help')", "%s %s", flag, reason)
}
