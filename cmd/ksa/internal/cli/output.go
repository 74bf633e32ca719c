package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// format is the -o flag: text, json or yaml.
type format string

const (
	formatText format = "text"
	formatJSON format = "json"
	formatYAML format = "yaml"
)

func (f *format) String() string { return string(*f) }
func (f *format) Type() string   { return "text|json|yaml" }
func (f *format) Set(v string) error {
	switch format(v) {
	case formatText, formatJSON, formatYAML:
		*f = format(v)
		return nil
	}
	return fmt.Errorf("want text, json or yaml, got %q", v)
}

// addOutputFlag adds -o to a command whose output is data.
func addOutputFlag(cmd *cobra.Command, f *format) {
	*f = formatText
	cmd.Flags().VarP(f, "output", "o", "output format: text, json or yaml")
}

// manifestFormat is the -o flag of a command whose output is a Kubernetes
// manifest: yaml or json.
type manifestFormat format

func (f *manifestFormat) String() string { return string(*f) }
func (f *manifestFormat) Type() string   { return "yaml|json" }
func (f *manifestFormat) Set(v string) error {
	switch format(v) {
	case formatJSON, formatYAML:
		*f = manifestFormat(v)
		return nil
	}
	return fmt.Errorf("want yaml or json, got %q", v)
}

// addManifestFlag adds -o to a command whose output is a manifest.
func addManifestFlag(cmd *cobra.Command, f *format) {
	*f = formatYAML
	cmd.Flags().VarP((*manifestFormat)(f), "output", "o", "manifest format: yaml or json")
}

// printData writes v as JSON or YAML, or calls text for the text format.
func printData(w io.Writer, f format, v any, text func(w io.Writer)) error {
	switch f {
	case formatJSON, formatYAML:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fail(err, bugFix, "encoding the output")
		}
		out := buf.Bytes()
		if f == formatYAML {
			y, err := yaml.JSONToYAML(out)
			if err != nil {
				return fail(err, bugFix, "encoding the output")
			}
			out = y
		}
		_, err := w.Write(out)
		return err
	}
	text(w)
	return nil
}

// relTime says how far t is from now, in words: "in 59m0s", "3h0m0s ago".
func relTime(t, now interface{ Unix() int64 }) string {
	d := t.Unix() - now.Unix()
	switch {
	case d == 0:
		return "now"
	case d > 0:
		return "in " + secs(d)
	default:
		return secs(-d) + " ago"
	}
}

// secs writes a whole number of seconds as days, hours, minutes, seconds.
func secs(n int64) string {
	var b strings.Builder
	for _, u := range []struct {
		s string
		n int64
	}{{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}} {
		if n >= u.n || (u.n == 1 && b.Len() == 0) {
			fmt.Fprintf(&b, "%d%s", n/u.n, u.s)
			n %= u.n
		}
	}
	return b.String()
}
