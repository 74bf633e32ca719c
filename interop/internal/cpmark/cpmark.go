// Package cpmark defines the two lines that tie test output to the control
// plane: the one a test logs when it runs on a kube-apiserver release, and
// the one a test skips with when etcd or kube-apiserver is missing (a mark
// of the module's internal/skipmark, its subject [Subject]). The harness in
// interop/controlplane writes them; the test runner in interop/ci/gotest
// counts them. One package holds both sides so that the format cannot
// drift between them.
package cpmark

import (
	"strings"

	"github.com/ksa-go/ksa/internal/skipmark"
)

// usingPrefix starts the line of a test that runs on a release.
const usingPrefix = "controlplane: using kube-apiserver "

// Subject is the subject of the control-plane tests' skip lines.
const Subject = "controlplane"

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
	return skipmark.Skip{Subject: Subject, Missing: s.Missing, Reason: s.Reason, Install: s.Install}.String()
}

// ParseSkip returns the [Skip] whose line is found in line, which may carry
// a prefix.
func ParseSkip(line string) (Skip, bool) {
	m, ok := skipmark.Parse(line)
	if !ok || m.Subject != Subject {
		return Skip{}, false
	}
	return Skip{Missing: m.Missing, Reason: m.Reason, Install: m.Install}, true
}
