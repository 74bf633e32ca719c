// Package clitest holds what the tests of the command groups share: a
// group run under a root of its own, and the checks every group's output
// passes (terminal-safe text, no temporary file left, flags' words in
// errors). Only tests import it.
package clitest

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// Group makes a command group on the app it runs in.
type Group func(a *base.App) *cobra.Command

// Main runs group under a root of its own with args and returns the exit
// status, as the ksa command would.
func Main(group Group, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &base.App{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return a.Execute(base.NewRoot(a, "", "", group(a)), args)
}

// Run runs group with args in dir and returns its exit status and output.
func Run(t *testing.T, dir string, group Group, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	code = Main(group, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// AssertNoTempFiles fails when dir holds a temporary file of an atomic
// write.
func AssertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), "temporary file left: %s", e.Name())
	}
}

// AssertTerminalSafe fails on anything a terminal would act on: a control
// character other than the newline ending a line, a C1 control, a format
// character (bidi overrides and isolates), a line or paragraph separator,
// or invalid UTF-8.
func AssertTerminalSafe(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("invalid UTF-8 in output: %q", out)
		return
	}
	for _, r := range out {
		if r == '\n' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			t.Errorf("output holds %U: %q", r, out)
			return
		}
	}
}

// goName matches what reads as a Go identifier in a message: a CamelCase
// word of two humps or more (RingConfig, ServerAuth, MaxLifetime), or a
// dotted Go path (Config.Field).
var goName = regexp.MustCompile(`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|\b[A-Z][A-Za-z]*\.[A-Z][A-Za-z]*\b`)

// IsUserWord reports whether a CamelCase word is one users meet in
// Kubernetes, Windows and JOSE: object kinds and the members of a
// credential spec.
func IsUserWord(w string) bool {
	return map[string]bool{
		"PodCertificateRequest": true, "PodCertificateRequests": true, "ClusterTrustBundle": true, "CertificateSigningRequest": true,
		"GMSACredentialSpec": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "TokenRequest": true,
		"CredentialSpec": true, "PowerShell": true, "CmsPlugins": true, "DomainJoinConfig": true, "ActiveDirectoryConfig": true,
		"GroupManagedServiceAccounts": true, "HostAccountConfig": true, "DnsName": true, "DnsTreeName": true, "MachineAccountName": true,
		"NetBiosName": true, "ObjectGUID": true, "DomainSID": true, "NetBIOSName": true, "EdDSA": true, "ExternalJWTSigner": true,
		"DomainJoinConfig.Sid": true,
	}[w]
}

// AssertUserWords fails on a Go name in a message.
func AssertUserWords(t *testing.T, msg string) {
	t.Helper()
	for _, w := range goName.FindAllString(msg, -1) {
		if !IsUserWord(w) && !strings.HasPrefix(w, "DomainJoinConfig.") && !strings.HasPrefix(w, "ActiveDirectoryConfig.") {
			t.Errorf("%q names %s, a Go name, not a flag", msg, w)
		}
	}
}
