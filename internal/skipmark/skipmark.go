// Package skipmark defines the line a test skips with when a program it
// needs is not installed, such as
//
//	# a test's skip line
//	SoftHSM2: skipped (softhsm2-util not found); install it with apt-get install -y softhsm2
//
// so that a test runner can count such tests and say, at the end of its
// output, how to install what they need: plain go test shows a skip only
// with -v. The key-store stand-ins (keystore/keystoretest) skip with these
// lines, the control-plane harness (interop/controlplane) too, and the
// runner of README.md's test command (interop/ci/gotest) counts them (tests
// only).
package skipmark

import (
	"strings"
)

const (
	skipped  = ": skipped ("
	notFound = " not found"
)

// Skip says why tests skipped.
type Skip struct {
	// Subject is what the tests need, as the runner names it: "SoftHSM2",
	// "Azurite", "controlplane". Letters, digits, spaces, dots, dashes and
	// underscores only, so that it parses after any prefix.
	Subject string
	// Missing names the programs not found: "softhsm2-util", "etcd".
	Missing []string
	// Reason is the cause when no program is missing, such as
	// "unsupported operating system".
	Reason string
	// Install is the command that installs what is missing; empty if none
	// helps.
	Install string
}

// String returns the line a test skips with, such as
//
//	# the control-plane harness's skip line
//	controlplane: skipped (etcd, kube-apiserver v1.37.2 not found); install them with .ci/install-controlplane.sh
func (s Skip) String() string {
	var b strings.Builder
	b.WriteString(s.Subject + skipped)
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

// Parse returns the [Skip] whose line is found in line, which may carry a
// prefix (test output indents it and names the file and line) or stand in
// quotes (a script's skip command, as its log shows it).
func Parse(line string) (Skip, bool) {
	i := strings.Index(line, skipped)
	if i < 0 {
		return Skip{}, false
	}
	subject := line[:i]
	start := len(subject)
	for start > 0 && subjectByte(subject[start-1]) {
		start--
	}
	quote := byte(0) // the quote the line is in, if any
	if start > 0 && (subject[start-1] == '\'' || subject[start-1] == '"') {
		quote = subject[start-1]
	}
	subject = strings.TrimSpace(subject[start:])
	cause, rest, ok := strings.Cut(line[i+len(skipped):], ")")
	if subject == "" || !ok {
		return Skip{}, false
	}
	s := Skip{Subject: subject}
	if names, ok := strings.CutSuffix(cause, notFound); ok {
		s.Missing = strings.Split(names, ", ")
	} else {
		s.Reason = cause
	}
	for _, p := range []string{"; install it with ", "; install them with "} {
		if install, ok := strings.CutPrefix(rest, p); ok {
			install = strings.TrimSpace(install)
			if quote != 0 {
				install = strings.TrimSuffix(install, string(quote))
			}
			s.Install = install
		}
	}
	return s, true
}

// subjectByte reports whether c may be part of a subject.
func subjectByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" ._-", c) >= 0
}
