package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/keystores"
)

// app is what every command shares: the streams and the clock.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// nowFlag is the hidden --now flag: an RFC 3339 time to use as the
	// clock, for reproducible output.
	nowFlag string
	clock   time.Time
	// keysRead are the files read as keys: never written.
	keysRead []keyRead
	// keys opens keys in key stores; closed when the command ends.
	keys keystores.Stores
	// buildInfo reads the build's version; nil means debug.ReadBuildInfo.
	readBuildInfo func() (*debug.BuildInfo, bool)
	// podcertClient makes "ksa podcert serve"'s client; nil means
	// podcertctl.NewRESTClient.
	podcertClient podcertClientFunc
	// rotateRead, when set (tests), is called once a scheduled rotation
	// that writes has read the ring file and the store, holding its lock.
	rotateRead func()
}

// buildInfo reads the build's version information.
func (a *app) buildInfo() (*debug.BuildInfo, bool) {
	if a.readBuildInfo != nil {
		return a.readBuildInfo()
	}
	return debug.ReadBuildInfo()
}

// now returns the command's clock.
func (a *app) now() time.Time {
	if !a.clock.IsZero() {
		return a.clock
	}
	return time.Now()
}

// Main runs the ksa command with args (without the program name) and
// returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&app{stdin: stdin, stdout: stdout, stderr: stderr}).main(args)
}

// main runs the command tree on a, printing a failure on a.stderr, and
// returns the exit status.
func (a *app) main(args []string) int {
	stderr := a.stderr
	root := newRoot(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	_ = a.keys.Close()
	if err != nil {
		err = explain(cmd, err)
		fmt.Fprintln(stderr, "ksa: "+oneLine(err.Error()))
	}
	return exitCode(err)
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "ksa",
		Short: "Kubernetes workload identity for operators: issuers, tokens, GMSA, certificates",
		Long: `ksa sets up and checks the identity of Kubernetes workloads.

Commands:
  issuer keygen          make a signing key: a PEM file, or in an HSM or KMS
  issuer render          write the OIDC discovery document and key set,
                         byte-identical to kube-apiserver's, and its flags
  issuer publish         upload them to Azure Blob, S3, GCS or a directory,
                         then check them as the clouds fetch them
  issuer check           fetch an issuer as Entra ID, AWS and Google do
  issuer rotate          add the next signing key and print the overlap plan
  issuer register azure  print the Entra ID federated identity credentials
  issuer register aws    print the AWS IAM OIDC provider and role trust policy
  issuer register gcp    print the Google workload identity pool and provider
  issuer capi-secret     print the Cluster API <cluster>-sa Secret of a key pair
  token inspect          decode a token without verifying it
  token verify           verify a token through its issuer's documents
  token mint             mint a token from a signing key (test clusters)
  credspec generate      write a GMSACredentialSpec manifest
  credspec crd           print the GMSACredentialSpec CustomResourceDefinition
  x509 inspect           show the identity of a certificate or a CSR
  x509 csr               make a certificate request for a service account
  webhook serve          run the GMSA credential-spec admission webhook
  signer serve           run the external JWT signer for kube-apiserver
  podcert serve          sign the PodCertificateRequests of a signer name
  podcert rbac           print the RBAC "ksa podcert serve" needs
  spiffe serve           serve a pod's certificate over the SPIFFE Workload API
  credential-provider run     answer the kubelet's image credential request
                         with the pod's token (pass-through or exchange)
  credential-provider config  print the kubelet's config and node RBAC, or lint one
  version                print the command's version and VCS revision

Exit status: 0 on success, 1 on failure (or when a check finds problems),
2 for a usage error.`,
		Example: `  # A self-managed issuer for Azure workload identity, end to end:
  ksa issuer keygen --out sa.key
  ksa issuer render --issuer https://oidcissuer.blob.core.windows.net/cluster-1/ --key sa.key --out site
  # upload site/ to the issuer URL, start kube-apiserver with the flags printed, then:
  ksa issuer check https://oidcissuer.blob.core.windows.net/cluster-1/`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.nowFlag == "" {
				return nil
			}
			t, err := time.Parse(time.RFC3339, a.nowFlag)
			if err != nil {
				return usage("give an RFC 3339 time, e.g. 2026-01-02T15:04:05Z", "--now %q does not parse", a.nowFlag)
			}
			a.clock = t
			return nil
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.PersistentFlags().StringVar(&a.nowFlag, "now", "", "use this RFC 3339 time as the clock (for tests)")
	_ = root.PersistentFlags().MarkHidden("now")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		newIssuerCmd(a),
		newTokenCmd(a),
		newCredspecCmd(a),
		newX509Cmd(a),
		newWebhookCmd(a),
		newSignerCmd(a),
		newPodcertCmd(a),
		newSpiffeCmd(a),
		newCredentialProviderCmd(a),
		newVersionCmd(a),
	)
	return root
}

// group returns a command that only holds subcommands; its examples are
// the first whole example command of each.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:                        use,
		Short:                      short,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fix := subcommandFix(cmd)
				if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
					fix = fmt.Sprintf("did you mean %s? (see '%s --help')", joinWords(near, "or"), cmd.CommandPath())
				}
				return usage(fix, "unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return usage(subcommandFix(cmd), "%q needs a subcommand", cmd.CommandPath())
		},
	}
	c.AddCommand(subs...)
	var ex []string
	for _, sub := range subs {
		if cmds := exampleCommands(sub.Example); len(cmds) > 0 {
			ex = append(ex, cmds[0])
		}
	}
	c.Example = strings.Join(ex, "\n")
	return c
}

// exampleCommands splits an Example into its commands: each a line that
// is not a comment, with the lines it continues onto (a trailing \), as
// written (indented, one command per element).
func exampleCommands(example string) []string {
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

// run adapts a command's function: any error that is not already an
// *Error becomes a failure.
func run(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
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

// args checks the number of positional arguments, as a usage error.
func args(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			want := fmt.Sprintf("%d", min)
			switch {
			case max < 0:
				want = fmt.Sprintf("at least %d", min)
			case max != min:
				want = fmt.Sprintf("%d to %d", min, max)
			}
			return usage("usage: "+cmd.UseLine(), "%s takes %s argument(s), got %d", cmd.CommandPath(), want, len(args))
		}
		return nil
	}
}

// required marks flags required (a missing one is a usage error).
func required(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		_ = cmd.MarkFlagRequired(n)
	}
}

// httpClient returns the client that fetches issuers: a timeout, and the
// system roots plus, with caFile, that CA.
func httpClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fail(err, "pass a readable PEM file of CA certificates", "reading --ca-file")
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fail(nil, "pass a PEM file of CA certificates", "--ca-file %s holds no certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}, nil
}
