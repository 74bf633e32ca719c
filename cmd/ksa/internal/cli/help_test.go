package cli

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/x509sa"
)

// allCommands returns every command of the tree, the root first.
func allCommands() []*cobra.Command {
	root := newRoot(&base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

var (
	flagName  = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)
	pipeToKSA = regexp.MustCompile(`\|\s*ksa `)
)

// TestUsageLinesNameRealFlags: every flag a usage line names exists on
// its command ("ksa signer serve" once named a --verify-key it did not
// have).
func TestUsageLinesNameRealFlags(t *testing.T) {
	for _, c := range allCommands() {
		for _, name := range flagName.FindAllString(c.Use, -1) {
			assert.NotNil(t, c.Flags().Lookup(strings.TrimPrefix(name, "--")), "%q names %s, which it does not have", c.CommandPath(), name)
		}
	}
}

// splitExample splits an example command into words as a shell would
// (single and double quotes), up to a pipe or a redirection.
func splitExample(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			require.GreaterOrEqual(t, end, 0, "unclosed quote in %q", line)
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '|' || c == '>':
			if inWord {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestExamplesParse: every example of every command names a command that
// exists, with flags it has, its required flags and an accepted number of
// arguments (the examples a script cannot run, which need a cluster, a
// network or a long-running server, are held to this much).
func TestExamplesParse(t *testing.T) {
	n := 0
	for _, c := range allCommands() {
		for _, ex := range base.ExampleCommands(c.Example) {
			line := strings.ReplaceAll(ex, "\\\n", " ")
			if loc := pipeToKSA.FindStringIndex(line); loc != nil {
				line = "ksa " + line[loc[1]:]
			}
			words := splitExample(t, strings.TrimSpace(line))
			require.NotEmpty(t, words)
			require.Equal(t, "ksa", words[0], "%s: %q", c.CommandPath(), line)
			t.Run(strings.Join(words, " "), func(t *testing.T) {
				root := allCommands()[0]
				cmd, rest, err := root.Find(words[1:])
				require.NoError(t, err)
				require.NoError(t, cmd.ParseFlags(rest))
				assert.Empty(t, base.MissingRequired(cmd), "required flags missing")
				if cmd.Args != nil {
					assert.NoError(t, cmd.Args(cmd, cmd.Flags().Args()))
				}
			})
			n++
		}
	}
	assert.Greater(t, n, 25)
}

// TestGroupExamplesAreWholeCommands: a group's help shows the first whole
// example command of each subcommand, continuation lines included.
func TestGroupExamplesAreWholeCommands(t *testing.T) {
	for _, c := range allCommands() {
		if !c.HasSubCommands() || !c.HasParent() {
			continue
		}
		for _, ex := range base.ExampleCommands(c.Example) {
			assert.False(t, strings.HasSuffix(strings.TrimSpace(ex), "\\"), "%s shows %q, cut at a continuation", c.CommandPath(), ex)
		}
		for _, sub := range c.Commands() {
			if cmds := base.ExampleCommands(sub.Example); len(cmds) > 0 {
				assert.Contains(t, base.ExampleCommands(c.Example), cmds[0], c.CommandPath())
			}
		}
	}
}

// TestHelpDefaults: the default --help shows for a flag is the value the
// command uses, taken from the library where the library decides it.
func TestHelpDefaults(t *testing.T) {
	flags := map[string]*pflag.Flag{}
	for _, c := range allCommands() {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[c.CommandPath()+" --"+f.Name] = f })
	}
	for _, tc := range []struct {
		flag, want string
	}{
		{flag: "ksa signer serve --max-token-lifetime", want: extsigner.DefaultMaxTokenLifetime.String()},
		{flag: "ksa podcert serve --max-lifetime", want: podcert.DefaultMaxLifetime.String()},
		{flag: "ksa podcert serve --trust-domain", want: podcert.DefaultTrustDomain},
		{flag: "ksa podcert serve --workers", want: strconv.Itoa(podcertctl.DefaultWorkers)},
		{flag: "ksa x509 csr --signer-name", want: x509sa.KubeAPIServerClientSigner},
		{flag: "ksa token mint --duration", want: time.Hour.String()},
		{flag: "ksa issuer check --audience", want: "api://AzureADTokenExchange"},
		{flag: "ksa issuer keygen --type", want: "rsa"},
		{flag: "ksa issuer keygen --bits", want: "2048"},
		{flag: "ksa issuer keygen --curve", want: "P-256"},
		// Like the current key: no fixed value to show.
		{flag: "ksa issuer rotate --type", want: ""},
		{flag: "ksa issuer rotate --bits", want: "0"},
		{flag: "ksa issuer rotate --curve", want: ""},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			f := flags[tc.flag]
			require.NotNil(t, f)
			assert.Equal(t, tc.want, f.DefValue)
		})
	}
	// A usage that promises a default in words leaves pflag no zero value
	// to print beside it, and one that pflag prints does not contradict.
	for name, f := range flags {
		if strings.Contains(f.Usage, "(default") && f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" && f.DefValue != "false" {
			t.Errorf("%s: its usage states a default (%q) and pflag prints %q too", name, f.Usage, f.DefValue)
		}
	}
}

// TestPodcertServeHelp: the help names where serving hosts and extensions
// come from (the projection field and the annotation keys, which were
// documented in the Go docs only) and what an issued certificate is worth
// once its CA is trusted.
func TestPodcertServeHelp(t *testing.T) {
	var out bytes.Buffer
	code := Main([]string{"podcert", "serve", "--help"}, strings.NewReader(""), &out, &out)
	require.Equal(t, base.ExitOK, code)
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		podcert.DefaultServeHostsKey, podcert.DefaultExtensionsKey,
		"podCertificate projection's userAnnotations", "spec.unverifiedUserAnnotations",
		"authenticates as its service account for its whole lifetime", "after the pod is deleted",
		"--max-lifetime", "24h or less",
	} {
		assert.Contains(t, help, want)
	}
	assert.NotContains(t, help, "the pod's annotations")
}
