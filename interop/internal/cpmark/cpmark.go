// Package cpmark defines the two lines that tie test output to the control
// plane: the one a test logs when it runs on a kube-apiserver release, and
// the one a test skips with when etcd or kube-apiserver is missing. The
// harness in interop/controlplane writes them; the test runner in
// interop/ci/gotest counts them. One package holds both sides so that the
// format cannot drift between them.
package cpmark

import (
	"strings"
)

const (
	usingPrefix = "controlplane: using kube-apiserver "
	skipPrefix  = "controlplane: skipped ("
	notFound    = " not found"
)

// Using returns the line a test logs when it runs on kube-apiserver version,
// such as "controlplane: using kube-apiserver v1.37.2".
func Using(version string) string { return usingPrefix + version }

// ParseUsing returns the version of a [Using] line found in line, which may
// carry a prefix (test output indents it and names the file and line).
func ParseUsing(line string) (version string, ok bool) {
	_, rest, ok := strings.Cut(line, usingPrefix)
	if !ok {
		return "", false
	}
	version, _, _ = strings.Cut(strings.TrimSpace(rest), " ")
	return version, version != ""
}

// Skip says why a control-plane test skipped.
type Skip struct {
	// Missing names the binaries not found: "etcd", "kube-apiserver v1.37.2".
	Missing []string
	// Reason is the cause when no binary is missing, such as "unsupported
	// operating system".
	Reason string
	// Install is the command that installs the missing binaries; empty if
	// none helps.
	Install string
}

// String returns the line a test skips with, such as
//
//	controlplane: skipped (etcd, kube-apiserver v1.37.2 not found); install them with .ci/install-controlplane.sh
func (s Skip) String() string {
	var b strings.Builder
	b.WriteString(skipPrefix)
	if len(s.Missing) > 0 {
		b.WriteString(strings.Join(s.Missing, ", ") + notFound)
	} else {
		b.WriteString(s.Reason)
	}
	b.WriteString(")")
	if s.Install != "" {
		if len(s.Missing) == 1 {
			b.WriteString("; install it with ")
		} else {
			b.WriteString("; install them with ")
		}
		b.WriteString(s.Install)
	}
	return b.String()
}

// ParseSkip returns the [Skip] whose line is found in line, which may carry
// a prefix.
func ParseSkip(line string) (Skip, bool) {
	_, rest, ok := strings.Cut(line, skipPrefix)
	if !ok {
		return Skip{}, false
	}
	cause, rest, ok := strings.Cut(rest, ")")
	if !ok {
		return Skip{}, false
	}
	var s Skip
	if names, ok := strings.CutSuffix(cause, notFound); ok {
		s.Missing = strings.Split(names, ", ")
	} else {
		s.Reason = cause
	}
	for _, p := range []string{"; install it with ", "; install them with "} {
		if install, ok := strings.CutPrefix(rest, p); ok {
			s.Install = strings.TrimSpace(install)
		}
	}
	return s, true
}
