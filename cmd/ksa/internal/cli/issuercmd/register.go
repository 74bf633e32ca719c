package issuercmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/federation/register"
)

// registration is what register prints: the commands to run and the
// requests they make.
type registration struct {
	Cloud    string    `json:"cloud"`
	Issuer   string    `json:"issuer"`
	Commands []string  `json:"commands"`
	Requests []request `json:"requests"`
	Notes    []string  `json:"notes,omitempty"`
}

// request is one API request of a registration.
type request struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	Body   any    `json:"body"`
}

// registerFlags are the settings every cloud's registration shares.
type registerFlags struct {
	issuer   string
	accounts []string
	audience string
	format   base.Format
}

func (f *registerFlags) add(cmd *cobra.Command, audience string) {
	fl := cmd.Flags()
	fl.StringVar(&f.issuer, "issuer", "", "the issuer URL, exactly as --service-account-issuer says it (required)")
	fl.StringArrayVar(&f.accounts, "service-account", nil, "a service account, NAMESPACE:NAME (repeatable; required)")
	fl.StringVar(&f.audience, "audience", audience, "the audience the tokens are requested for")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "issuer", "service-account")
}

// subjects checks the issuer and returns the service accounts' subjects.
func (f *registerFlags) subjects() ([]ksa.ServiceAccount, error) {
	if err := base.CheckIssuerURL(f.issuer); err != nil {
		return nil, err
	}
	var out []ksa.ServiceAccount
	seen := map[string]bool{}
	for _, s := range f.accounts {
		sa, err := parseServiceAccountFlag(s)
		if err != nil {
			return nil, err
		}
		if seen[sa.Username()] {
			return nil, base.Usage("name each service account once", "--service-account %s is given twice", s)
		}
		seen[sa.Username()] = true
		out = append(out, sa)
	}
	return out, nil
}

// parseServiceAccountFlag reads NAMESPACE:NAME or a full username.
func parseServiceAccountFlag(s string) (ksa.ServiceAccount, error) {
	full := s
	if !strings.HasPrefix(s, ksa.UsernamePrefix) {
		full = ksa.UsernamePrefix + s
	}
	sa, err := ksa.ParseUsername(full)
	if err != nil {
		return sa, base.Usage("write --service-account NAMESPACE:NAME, e.g. prod:billing", "--service-account %q: %s", s, ksa.ErrorText(err))
	}
	return sa, nil
}

func newRegisterCmd(a *base.App) *cobra.Command {
	return base.Group("register", "Print the cloud registrations of the issuer: Entra ID federated credentials, an AWS IAM OIDC provider, a Google workload identity pool provider",
		newRegisterAzureCmd(a), newRegisterAWSCmd(a), newRegisterGCPCmd(a))
}

type registerAzureFlags struct {
	registerFlags
	identity, resourceGroup, subscription, appID string
}

func newRegisterAzureCmd(a *base.App) *cobra.Command {
	f := &registerAzureFlags{}
	cmd := &cobra.Command{
		Use:   "azure --issuer URL --service-account NS:NAME... (--identity NAME --resource-group RG | --app-id ID)",
		Short: "Print the Entra ID federated identity credentials of service accounts (az commands and request bodies)",
		Long: `Print one Entra ID federated identity credential per service account: its
issuer (byte for byte kube-apiserver's --service-account-issuer, trailing
slash included), its subject system:serviceaccount:NAMESPACE:NAME and its
audience, as az commands and as the request bodies they send.

A user-assigned managed identity (--identity, --resource-group) or an
application (--app-id) holds at most 20 federated credentials: more
service accounts than that are refused; count the ones it already holds
(az identity federated-credential list).`,
		Example: `  ksa issuer register azure --issuer https://oidcissuer.blob.core.windows.net/cluster-1/ \
      --service-account prod:billing --identity billing-id --resource-group prod-rg
  ksa issuer register azure --issuer https://oidc.example.com/cluster-1 \
      --service-account prod:billing --app-id 00000000-0000-0000-0000-000000000001 -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	f.add(cmd, register.EntraAudience)
	fl := cmd.Flags()
	fl.StringVar(&f.identity, "identity", "", "the user-assigned managed identity")
	fl.StringVar(&f.resourceGroup, "resource-group", "", "the managed identity's resource group")
	fl.StringVar(&f.subscription, "subscription", "", "the managed identity's subscription (default: the az CLI's)")
	fl.StringVar(&f.appID, "app-id", "", "the application (client) ID of an app registration, instead of a managed identity")
	return cmd
}

func (f *registerAzureFlags) run(a *base.App) error {
	switch {
	case f.appID == "" && f.identity == "":
		return base.Usage("add --identity NAME --resource-group RG (a managed identity) or --app-id ID (an application)", "no identity to register with")
	case f.appID != "" && (f.identity != "" || f.resourceGroup != "" || f.subscription != ""):
		return base.Usage("give --app-id alone, or --identity with --resource-group", "--app-id and --identity name two identities")
	case f.identity != "" && f.resourceGroup == "":
		return base.Usage("add --resource-group", "--identity needs --resource-group")
	}
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	reg, err := register.Azure(register.AzureConfig{Issuer: f.issuer, ServiceAccounts: sas, Audience: f.audience,
		Identity: f.identity, ResourceGroup: f.resourceGroup, Subscription: f.subscription, AppID: f.appID})
	return f.print(a, reg, err, "spread the service accounts over several identities, at most 20 each")
}

type registerAWSFlags struct {
	registerFlags
	accountID, role string
}

func newRegisterAWSCmd(a *base.App) *cobra.Command {
	f := &registerAWSFlags{}
	cmd := &cobra.Command{
		Use:   "aws --issuer URL --service-account NS:NAME... --account-id ID [--role NAME]",
		Short: "Print the AWS IAM OIDC provider of the issuer and the role trust policy of service accounts (aws commands and request bodies)",
		Long: `Print the IAM OIDC identity provider of the issuer (its audience
sts.amazonaws.com unless --audience says otherwise) and the trust policy
that lets the service accounts assume a role with their tokens (IRSA), as
aws commands and as the JSON they send (--cli-input-json and the policy
document). With --role the role is created with that policy.

IAM's default quota on a trust policy is 2048 characters: a longer one is
reported (raise the quota, or split the service accounts over roles).`,
		Example: `  ksa issuer register aws --issuer https://oidc.example.com/cluster-1 \
      --service-account prod:billing --account-id 111122223333 --role billing`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	f.add(cmd, register.AWSAudience)
	cmd.Flags().StringVar(&f.accountID, "account-id", "", "the AWS account holding the provider, 12 digits (required)")
	cmd.Flags().StringVar(&f.role, "role", "", "create this role with the trust policy")
	base.Required(cmd, "account-id")
	return cmd
}

func (f *registerAWSFlags) run(a *base.App) error {
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	reg, err := register.AWS(register.AWSConfig{Issuer: f.issuer, ServiceAccounts: sas, Audience: f.audience, AccountID: f.accountID, Role: f.role})
	return f.print(a, reg, err, "")
}

type registerGCPFlags struct {
	registerFlags
	projectNumber, pool, provider, role string
}

func newRegisterGCPCmd(a *base.App) *cobra.Command {
	f := &registerGCPFlags{}
	cmd := &cobra.Command{
		Use:   "gcp --issuer URL --service-account NS:NAME... --project-number N --pool POOL --provider PROVIDER",
		Short: "Print the Google workload identity pool and provider of the issuer and the principals of service accounts (gcloud commands and request bodies)",
		Long: `Print the workload identity pool and its OIDC provider for the issuer
(google.subject mapped from the token's sub), as gcloud commands and as the
request bodies they send, and the principal of each service account, to be
granted roles (with --role, on the project).

Tokens must be requested for the provider's own name as audience unless
--audience names the allowed audience. google.subject holds at most 127
bytes: a longer system:serviceaccount:NAMESPACE:NAME is refused.`,
		Example: `  ksa issuer register gcp --issuer https://oidc.example.com/cluster-1 \
      --service-account prod:billing --project-number 123456789012 --pool cluster-1 --provider cluster-1-oidc`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	f.add(cmd, "")
	fl := cmd.Flags()
	fl.StringVar(&f.projectNumber, "project-number", "", "the project number (required)")
	fl.StringVar(&f.pool, "pool", "", "the workload identity pool ID (required)")
	fl.StringVar(&f.provider, "provider", "", "the provider ID (required)")
	fl.StringVar(&f.role, "role", "", "grant this role on the project to each service account's principal")
	base.Required(cmd, "project-number", "pool", "provider")
	return cmd
}

func (f *registerGCPFlags) run(a *base.App) error {
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	reg, err := register.GCP(register.GCPConfig{Issuer: f.issuer, ServiceAccounts: sas, Audience: f.audience,
		ProjectNumber: f.projectNumber, Pool: f.pool, Provider: f.provider, Role: f.role})
	return f.print(a, reg, err, "map google.subject from a shorter attribute, or use a shorter namespace and name")
}

// registerFlagFor names the flag behind each field of the library's
// registration configurations, and its fix.
var registerFlagFor = map[string]struct{ flag, fix string }{
	"Issuer":          {"--issuer", "give --issuer the https:// URL of kube-apiserver's --service-account-issuer"},
	"ServiceAccounts": {"--service-account", "name each service account once"},
	"Audience":        {"--audience", "give --audience without spaces"},
	"Identity":        {"--identity", "add --identity NAME --resource-group RG (a managed identity) or --app-id ID (an application)"},
	"ResourceGroup":   {"--resource-group", "add --resource-group"},
	"Subscription":    {"--subscription", "give --subscription with --identity, not --app-id"},
	"AppID":           {"--app-id", "give --app-id alone, or --identity with --resource-group"},
	"AccountID":       {"--account-id", "give --account-id the 12 digits of the account (aws sts get-caller-identity --query Account)"},
	"Role":            {"--role", "give --role a role name"},
	"ProjectNumber":   {"--project-number", "give --project-number the number (gcloud projects describe PROJECT --format='value(projectNumber)')"},
	"Pool":            {"--pool", "give --pool 4 to 32 lowercase letters, digits or hyphens, not starting with gcp-"},
	"Provider":        {"--provider", "give --provider 4 to 32 lowercase letters, digits or hyphens, not starting with gcp-"},
}

// print prints a registration the library rendered, or explains why it
// refused the flags: limit is the fix when the service accounts are more
// than the cloud holds.
func (f *registerFlags) print(a *base.App, reg *register.Registration, err error, limit string) error {
	if p, ok := base.AsConfigProblem(err); ok {
		typ, field, _ := strings.Cut(p.Field, ".")
		if field == "ServiceAccounts" && limit != "" {
			return base.Fail(nil, limit, "%s", p.Reason)
		}
		name, _, _ := strings.Cut(field, "[")
		if m, ok := registerFlagFor[name]; ok {
			return base.Usage(m.fix, "%s %s", m.flag, p.Reason)
		}
		return base.Fail(err, base.BugFix, "rendering the %s registration", typ)
	}
	if err != nil {
		return base.Fail(err, base.BugFix, "rendering the registration")
	}
	out := registration{Cloud: reg.Cloud, Issuer: reg.Issuer, Commands: []string{}, Requests: []request{}}
	for _, c := range reg.Commands {
		out.Commands = append(out.Commands, base.CommandLine(c...))
	}
	for _, r := range reg.Requests {
		out.Requests = append(out.Requests, request{Method: r.Method, URL: r.URL, Body: r.Body})
	}
	words := base.FlagFor{"AWSConfig.Role": "--role", "GCPConfig.Audience": "--audience"}
	for _, n := range reg.Notes {
		out.Notes = append(out.Notes, words.Words(n))
	}
	return printRegistration(a.Stdout, f.format, out)
}

// printRegistration writes a registration: as text, the commands and then
// each request with its body.
func printRegistration(w io.Writer, f base.Format, reg registration) error {
	return base.PrintData(w, f, reg, func(w io.Writer) {
		fmt.Fprintf(w, "# %s registration of issuer %s\n", reg.Cloud, reg.Issuer)
		for _, c := range reg.Commands {
			fmt.Fprintln(w, c)
		}
		for _, r := range reg.Requests {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("#   ", "  ")
			_ = enc.Encode(r.Body)
			if r.URL != "" {
				fmt.Fprintf(w, "\n# %s %s\n#   %s", r.Method, r.URL, buf.String())
			} else {
				fmt.Fprintf(w, "\n# trust policy:\n#   %s", buf.String())
			}
		}
		for _, n := range reg.Notes {
			fmt.Fprintf(w, "\n# note: %s", n)
		}
		fmt.Fprintln(w)
	})
}
