package base

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// explain turns an error cobra returned (it is not an *Error: a missing
// required flag, an unknown command of the root) into a usage error whose
// fix names the flags or commands to use.
func explain(cmd *cobra.Command, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if cmd == nil {
		return Usage("see 'ksa --help'", "%s", err.Error())
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "required flag(s)"):
		return Usage(fmt.Sprintf("give %s (see '%s --help')", JoinWords(MissingRequired(cmd), "and"), cmd.CommandPath()), "%s", msg)
	case strings.HasPrefix(msg, "unknown command"):
		first, rest, _ := strings.Cut(msg, "\n")
		if _, names, ok := strings.Cut(rest, "Did you mean this?"); ok {
			return Usage(fmt.Sprintf("did you mean %s? (see '%s --help')", JoinWords(strings.Fields(names), "or"), cmd.CommandPath()), "%s", first)
		}
		return Usage(subcommandFix(cmd), "%s", first)
	}
	return Usage(fmt.Sprintf("see '%s --help'", cmd.CommandPath()), "%s", msg)
}

// MissingRequired names the required flags of cmd that were not given.
func MissingRequired(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if req, ok := f.Annotations[cobra.BashCompOneRequiredFlag]; ok && len(req) > 0 && req[0] == "true" && !f.Changed {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

// subcommandFix lists the commands of a group.
func subcommandFix(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return fmt.Sprintf("use one of %s: %s (see '%s --help')", commandWord(cmd), strings.Join(names, ", "), cmd.CommandPath())
}

func commandWord(cmd *cobra.Command) string {
	if cmd.HasParent() {
		return "its commands"
	}
	return "the commands"
}

// flagError turns a flag parsing error into a usage error whose fix names
// the flag to use: the closest ones for an unknown flag, the values a flag
// takes for a bad value.
func flagError(cmd *cobra.Command, err error) error {
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		return Usage(flagSuggestion(cmd, notExist.GetSpecifiedName()), "%s", err.Error())
	case errors.As(err, &required):
		name := "--" + required.GetFlag().Name
		return Usage(fmt.Sprintf("give %s a value: %s %s", name, name, valueHint(required.GetFlag())), "%s", err.Error())
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", --" + f.Name
		}
		hint := valueHint(f)
		cause := errors.Unwrap(err)
		what := "want " + hint
		if cause != nil && !strings.Contains(cause.Error(), "strconv.") && !strings.Contains(cause.Error(), "time: ") {
			what = cause.Error()
		}
		return Usage(fmt.Sprintf("give --%s %s", f.Name, hint), "invalid argument %q for %q flag: %s", invalid.GetValue(), name, what)
	}
	return Usage(fmt.Sprintf("see '%s --help'", cmd.CommandPath()), "%s", err.Error())
}

// valueHint says what a flag's value looks like.
func valueHint(f *pflag.Flag) string {
	switch t := f.Value.Type(); t {
	case "duration":
		return "a duration, e.g. 10m or 24h"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string", "stringArray":
		return strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
	default:
		if strings.Contains(t, "|") {
			return JoinWords(strings.Split(t, "|"), "or")
		}
		return t
	}
}

// flagSuggestion advises on an unknown flag: the flags closest to the name
// given, or the command's flags when none is close.
func flagSuggestion(cmd *cobra.Command, name string) string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) || strings.Contains(f.Name, name) {
			d = min(d, 1)
		}
		all = append(all, scored{"--" + f.Name, d})
	})
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	var close []string
	for _, s := range all {
		if len(name) > 1 && s.d <= max(2, len(name)/3) {
			close = append(close, s.name)
		}
	}
	if len(close) > 0 {
		return fmt.Sprintf("did you mean %s? (see '%s --help')", JoinWords(close, "or"), cmd.CommandPath())
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.name
	}
	sort.Strings(names)
	return fmt.Sprintf("use one of its flags: %s (see '%s --help')", strings.Join(names, ", "), cmd.CommandPath())
}

// editDistance is the Levenshtein distance between two strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// JoinWords joins words as a sentence does: "a", "a and b", "a, b and c".
func JoinWords(words []string, and string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + and + " " + words[len(words)-1]
}
