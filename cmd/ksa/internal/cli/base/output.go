package base

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Format is the -o flag: text, json or yaml.
type Format string

const (
	formatText Format = "text"
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

func (f *Format) String() string { return string(*f) }

func (f *Format) Type() string { return "text|json|yaml" }

func (f *Format) Set(v string) error {
	switch Format(v) {
	case formatText, FormatJSON, FormatYAML:
		*f = Format(v)
		return nil
	}
	return fmt.Errorf("want text, json or yaml, got %q", v)
}

// AddOutputFlag adds -o to a command whose output is data.
func AddOutputFlag(cmd *cobra.Command, f *Format) {
	*f = formatText
	cmd.Flags().VarP(f, "output", "o", "output format: text, json or yaml")
}

// ManifestFormat is the -o flag of a command whose output is a Kubernetes
// manifest: yaml or json.
type ManifestFormat Format

func (f *ManifestFormat) String() string { return string(*f) }

func (f *ManifestFormat) Type() string { return "yaml|json" }

func (f *ManifestFormat) Set(v string) error {
	switch Format(v) {
	case FormatJSON, FormatYAML:
		*f = ManifestFormat(v)
		return nil
	}
	return fmt.Errorf("want yaml or json, got %q", v)
}

// AddManifestFlag adds -o to a command whose output is a manifest.
func AddManifestFlag(cmd *cobra.Command, f *Format) {
	*f = FormatYAML
	cmd.Flags().VarP((*ManifestFormat)(f), "output", "o", "manifest format: yaml or json")
}

// PrintData writes v as JSON or YAML, or calls text for the text format.
func PrintData(w io.Writer, f Format, v any, text func(w io.Writer)) error {
	switch f {
	case FormatJSON, FormatYAML:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return Fail(err, BugFix, "encoding the output")
		}
		out := buf.Bytes()
		if f == FormatYAML {
			y, err := yaml.JSONToYAML(out)
			if err != nil {
				return Fail(err, BugFix, "encoding the output")
			}
			out = y
		}
		_, err := w.Write(out)
		return err
	}
	text(w)
	return nil
}

// RelTime says how far t is from now, in words: "in 59m0s", "3h0m0s ago".
func RelTime(t, now interface{ Unix() int64 }) string {
	d := t.Unix() - now.Unix()
	switch {
	case d == 0:
		return "now"
	case d > 0:
		return "in " + Secs(d)
	default:
		return Secs(-d) + " ago"
	}
}

// Secs writes a whole number of seconds as days, hours, minutes, seconds.
func Secs(n int64) string {
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

// TimeInfo is a time claim and how far it is from now.
type TimeInfo struct {
	Time     time.Time `json:"time"`
	Relative string    `json:"relative"`
}

func NewTimeInfo(t, now time.Time) *TimeInfo {
	if t.IsZero() {
		return nil
	}
	return &TimeInfo{Time: t.UTC(), Relative: RelTime(t, now)}
}
