package base

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/keystores"
	"github.com/ksa-go/ksa/keystore"
)

// App is what every command shares: the streams and the clock.
type App struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// nowFlag is the hidden --now flag: an RFC 3339 time to use as the
	// clock, for reproducible output.
	NowFlag string
	clock   time.Time
	// keysRead are the files read as keys: never written.
	keysRead []keyRead
	// keys opens keys in key stores; closed when the command ends.
	Keys keystores.Stores
	// buildInfo reads the build's version; nil means debug.ReadBuildInfo.
	ReadBuildInfo func() (*debug.BuildInfo, bool)
}

// BuildInfo reads the build's version information.
func (a *App) BuildInfo() (*debug.BuildInfo, bool) {
	if a.ReadBuildInfo != nil {
		return a.ReadBuildInfo()
	}
	return debug.ReadBuildInfo()
}

// Now returns the command's clock.
func (a *App) Now() time.Time {
	if !a.clock.IsZero() {
		return a.clock
	}
	return time.Now()
}

// Execute runs the command tree root on a with args, printing a failure
// on a.stderr, and returns the exit status.
func (a *App) Execute(root *cobra.Command, args []string) int {
	stderr := a.Stderr
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	_ = a.Keys.Close()
	if err != nil {
		err = explain(cmd, err)
		fmt.Fprintln(stderr, "ksa: "+OneLine(err.Error()))
	}
	return ExitCode(err)
}

// NewRoot returns the root command, ksa, with its help and the command
// groups: the hidden --now flag, the flags' errors with their fixes, and
// every stream of a.
func NewRoot(a *App, long, example string, groups ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:               "ksa",
		Short:             "Kubernetes workload identity for operators: issuers, tokens, GMSA, certificates",
		Long:              long,
		Example:           example,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.NowFlag == "" {
				return nil
			}
			t, err := time.Parse(time.RFC3339, a.NowFlag)
			if err != nil {
				return Usage("give an RFC 3339 time, e.g. 2026-01-02T15:04:05Z", "--now %q does not parse", a.NowFlag)
			}
			a.clock = t
			return nil
		},
	}
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	root.PersistentFlags().StringVar(&a.NowFlag, "now", "", "use this RFC 3339 time as the clock (for tests)")
	_ = root.PersistentFlags().MarkHidden("now")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(groups...)
	return root
}

// Group returns a command that only holds subcommands; its examples are
// the first whole example command of each.
func Group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:                        use,
		Short:                      short,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fix := subcommandFix(cmd)
				if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
					fix = fmt.Sprintf("did you mean %s? (see '%s --help')", JoinWords(near, "or"), cmd.CommandPath())
				}
				return Usage(fix, "unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return Usage(subcommandFix(cmd), "%q needs a subcommand", cmd.CommandPath())
		},
	}
	c.AddCommand(subs...)
	var ex []string
	for _, sub := range subs {
		if cmds := ExampleCommands(sub.Example); len(cmds) > 0 {
			ex = append(ex, cmds[0])
		}
	}
	c.Example = strings.Join(ex, "\n")
	return c
}

// ExampleCommands splits an Example into its commands: each a line that
// is not a comment, with the lines it continues onto (a trailing \), as
// written (indented, one command per element).
func ExampleCommands(example string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(example, "\n") {
		if len(cur) == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		cur = append(cur, line)
		if !strings.HasSuffix(strings.TrimSpace(line), "\\") {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// Run adapts a command's function: any error that is not already an
// *Error becomes a failure.
func Run(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := fn(cmd, args)
		if err == nil {
			return nil
		}
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return &Error{What: cmd.CommandPath() + " failed", Err: err, Fix: "check the flags and files given (see '" + cmd.CommandPath() + " --help')"}
	}
}

// Args checks the number of positional arguments, as a usage error.
func Args(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			want := fmt.Sprintf("%d", min)
			switch {
			case max < 0:
				want = fmt.Sprintf("at least %d", min)
			case max != min:
				want = fmt.Sprintf("%d to %d", min, max)
			}
			return Usage("usage: "+cmd.UseLine(), "%s takes %s argument(s), got %d", cmd.CommandPath(), want, len(args))
		}
		return nil
	}
}

// Required marks flags required (a missing one is a usage error).
func Required(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		_ = cmd.MarkFlagRequired(n)
	}
}

// HTTPClient returns the client that fetches issuers: a timeout, and the
// system roots plus, with caFile, that CA.
func HTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, Fail(err, "pass a readable PEM file of CA certificates", "reading --ca-file")
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, Fail(nil, "pass a PEM file of CA certificates", "--ca-file %s holds no certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}, nil
}

// SignalContext is canceled on SIGINT or SIGTERM.
func SignalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// KeyOpener opens the signing keys "ksa signer serve" and "ksa issuer
// rotate --ring" name, by reference: the one place the command chooses
// the key stores it links.
func (a *App) KeyOpener() keystore.Opener { return &a.Keys }
