// Package cpmark defines the lines that tie test output to the control
// plane and to the node: the one a test logs when it runs on a
// kube-apiserver release ([Using]) or on a kubelet release ([NodeUsing]),
// and the one a test skips with when etcd or kube-apiserver is missing (a
// mark of the module's internal/skipmark, its subject [Subject]) or when
// containerd, runc or the kubelet is (subject [NodeSubject]). The harnesses
// in interop/controlplane and interop/node write them; the test runner in
// interop/ci/gotest counts them. One package holds both sides so that the
// format cannot drift between them.
package cpmark

import (
	"strings"

	"github.com/ksa-go/ksa/internal/skipmark"
)

// usingPrefix starts the line of a test that runs on a release;
// nodeUsingPrefix that of a test that runs a node.
const (
	usingPrefix     = "controlplane: using kube-apiserver "
	nodeUsingPrefix = "node: using kubelet "
)

// Subject is the subject of the control-plane tests' skip lines,
// NodeSubject that of the node tests'.
const (
	Subject     = "controlplane"
	NodeSubject = "node"
)

// Using returns the line a test logs when it runs on kube-apiserver version,
// such as "controlplane: using kube-apiserver v1.37.2".
func Using(version string) string { return usingPrefix + version }

// ParseUsing returns the version of a [Using] line found in line, which may
// carry a prefix (test output indents it and names the file and line).
func ParseUsing(line string) (version string, ok bool) {
	return parseUsing(line, usingPrefix)
}

// NodeUsing returns the line a test logs when it runs a node of kubelet
// version, such as "node: using kubelet v1.37.2".
func NodeUsing(version string) string { return nodeUsingPrefix + version }

// ParseNodeUsing returns the version of a [NodeUsing] line found in line,
// which may carry a prefix.
func ParseNodeUsing(line string) (version string, ok bool) {
	return parseUsing(line, nodeUsingPrefix)
}

func parseUsing(line, prefix string) (version string, ok bool) {
	_, rest, ok := strings.Cut(line, prefix)
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
