package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/publish"
)

// Limits of the clouds' registrations.
const (
	// entraMaxCredentials is how many federated identity credentials one
	// Entra ID application or managed identity holds.
	entraMaxCredentials = 20
	// awsTrustPolicyChars is IAM's default quota on a role's trust
	// policy (raisable to 4096).
	awsTrustPolicyChars = 2048
	// googleMaxSubject bounds google.subject, the mapped token subject.
	googleMaxSubject = 127
	// awsAudience is the audience IRSA's tokens carry.
	awsAudience = "sts.amazonaws.com"
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
	format   format
}

func (f *registerFlags) add(cmd *cobra.Command, audience string) {
	fl := cmd.Flags()
	fl.StringVar(&f.issuer, "issuer", "", "the issuer URL, exactly as --service-account-issuer says it (required)")
	fl.StringArrayVar(&f.accounts, "service-account", nil, "a service account, NAMESPACE:NAME (repeatable; required)")
	fl.StringVar(&f.audience, "audience", audience, "the audience the tokens are requested for")
	addOutputFlag(cmd, &f.format)
	required(cmd, "issuer", "service-account")
}

// subjects checks the issuer and returns the service accounts' subjects.
func (f *registerFlags) subjects() ([]ksa.ServiceAccount, error) {
	if err := checkIssuerURL(f.issuer); err != nil {
		return nil, err
	}
	if u, err := url.Parse(f.issuer); err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, usage("give --issuer the https:// URL of kube-apiserver's --service-account-issuer", "--issuer %q is not an issuer URL", publish.RedactURL(f.issuer))
	}
	var out []ksa.ServiceAccount
	seen := map[string]bool{}
	for _, s := range f.accounts {
		sa, err := parseServiceAccountFlag(s)
		if err != nil {
			return nil, err
		}
		if seen[sa.Username()] {
			return nil, usage("name each service account once", "--service-account %s is given twice", s)
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
		return sa, usage("write --service-account NAMESPACE:NAME, e.g. prod:billing", "--service-account %q: %s", s, ksa.ErrorText(err))
	}
	return sa, nil
}

func newRegisterCmd(a *app) *cobra.Command {
	return group("register", "Print the cloud registrations of the issuer: Entra ID federated credentials, an AWS IAM OIDC provider, a Google workload identity pool provider",
		newRegisterAzureCmd(a), newRegisterAWSCmd(a), newRegisterGCPCmd(a))
}

// ficNameChars are what a federated credential's name may hold besides
// letters and digits.
var ficNameBad = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ficName names a service account's federated credential: NAMESPACE-NAME,
// the characters Entra ID refuses made hyphens, at most 120 characters.
func ficName(sa ksa.ServiceAccount) string {
	n := ficNameBad.ReplaceAllString(sa.Namespace+"-"+sa.Name, "-")
	if len(n) > 120 {
		n = n[:120]
	}
	return n
}

type registerAzureFlags struct {
	registerFlags
	identity, resourceGroup, subscription, appID string
}

func newRegisterAzureCmd(a *app) *cobra.Command {
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
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	f.add(cmd, azureAudience)
	fl := cmd.Flags()
	fl.StringVar(&f.identity, "identity", "", "the user-assigned managed identity")
	fl.StringVar(&f.resourceGroup, "resource-group", "", "the managed identity's resource group")
	fl.StringVar(&f.subscription, "subscription", "", "the managed identity's subscription (default: the az CLI's)")
	fl.StringVar(&f.appID, "app-id", "", "the application (client) ID of an app registration, instead of a managed identity")
	return cmd
}

func (f *registerAzureFlags) run(a *app, cmd *cobra.Command) error {
	switch {
	case f.appID == "" && f.identity == "":
		return usage("add --identity NAME --resource-group RG (a managed identity) or --app-id ID (an application)", "no identity to register with")
	case f.appID != "" && (f.identity != "" || f.resourceGroup != "" || f.subscription != ""):
		return usage("give --app-id alone, or --identity with --resource-group", "--app-id and --identity name two identities")
	case f.identity != "" && f.resourceGroup == "":
		return usage("add --resource-group", "--identity needs --resource-group")
	}
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	if len(sas) > entraMaxCredentials {
		return fail(nil, "spread the service accounts over several identities, at most 20 each", "%d service accounts: an Entra ID identity holds at most %d federated credentials", len(sas), entraMaxCredentials)
	}
	if strings.TrimSpace(f.audience) != f.audience || f.audience == "" {
		return usage("give --audience without spaces", "--audience %q", f.audience)
	}
	reg := registration{Cloud: "azure", Issuer: f.issuer, Commands: []string{}, Requests: []request{}}
	for _, sa := range sas {
		name := ficName(sa)
		if f.appID != "" {
			body := map[string]any{"name": name, "issuer": f.issuer, "subject": sa.Username(), "audiences": []string{f.audience}}
			reg.Commands = append(reg.Commands, commandLine("az", "ad", "app", "federated-credential", "create", "--id", f.appID, "--parameters", compactJSON(body)))
			reg.Requests = append(reg.Requests, request{Method: "POST", URL: "https://graph.microsoft.com/v1.0/applications(appId='" + f.appID + "')/federatedIdentityCredentials", Body: body})
			continue
		}
		args := []string{"az", "identity", "federated-credential", "create", "--name", name, "--identity-name", f.identity, "--resource-group", f.resourceGroup}
		if f.subscription != "" {
			args = append(args, "--subscription", f.subscription)
		}
		args = append(args, "--issuer", f.issuer, "--subject", sa.Username(), "--audiences", f.audience)
		reg.Commands = append(reg.Commands, commandLine(args...))
		sub := f.subscription
		if sub == "" {
			sub = "{subscriptionId}"
		}
		reg.Requests = append(reg.Requests, request{Method: "PUT",
			URL:  fmt.Sprintf("https://management.azure.com/subscriptions/%s/resourceGroups/%s/providers/Microsoft.ManagedIdentity/userAssignedIdentities/%s/federatedIdentityCredentials/%s?api-version=2023-01-31", sub, url.PathEscape(f.resourceGroup), url.PathEscape(f.identity), name),
			Body: map[string]any{"properties": map[string]any{"issuer": f.issuer, "subject": sa.Username(), "audiences": []string{f.audience}}}})
	}
	holder := "managed identity " + f.identity
	if f.appID != "" {
		holder = "application " + f.appID
	}
	reg.Notes = append(reg.Notes, fmt.Sprintf("%s holds at most %d federated credentials; these are %d of them (az identity federated-credential list shows the others)", holder, entraMaxCredentials, len(sas)))
	if f.audience != azureAudience {
		reg.Notes = append(reg.Notes, "the audience is not "+azureAudience+", the one Entra ID documents for federated credentials")
	}
	reg.Notes = append(reg.Notes, "Entra ID compares the issuer byte for byte with the tokens' iss: a trailing slash counts (AADSTS700211)")
	return printRegistration(a.stdout, f.format, reg)
}

type registerAWSFlags struct {
	registerFlags
	accountID, role string
}

var awsAccountID = regexp.MustCompile(`^[0-9]{12}$`)

func newRegisterAWSCmd(a *app) *cobra.Command {
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
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	f.add(cmd, awsAudience)
	cmd.Flags().StringVar(&f.accountID, "account-id", "", "the AWS account holding the provider, 12 digits (required)")
	cmd.Flags().StringVar(&f.role, "role", "", "create this role with the trust policy")
	required(cmd, "account-id")
	return cmd
}

func (f *registerAWSFlags) run(a *app) error {
	if !awsAccountID.MatchString(f.accountID) {
		return usage("give --account-id the 12 digits of the account (aws sts get-caller-identity --query Account)", "--account-id %q is not an AWS account ID", f.accountID)
	}
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	host := strings.TrimSuffix(strings.TrimPrefix(f.issuer, "https://"), "/")
	provider := "arn:aws:iam::" + f.accountID + ":oidc-provider/" + host
	subs := make([]string, len(sas))
	for i, sa := range sas {
		subs[i] = sa.Username()
	}
	var sub any = subs
	if len(subs) == 1 {
		sub = subs[0]
	}
	trust := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Principal": map[string]any{"Federated": provider},
			"Action":    "sts:AssumeRoleWithWebIdentity",
			"Condition": map[string]any{"StringEquals": map[string]any{host + ":aud": f.audience, host + ":sub": sub}},
		}},
	}
	input := map[string]any{"Url": f.issuer, "ClientIDList": []string{f.audience}}
	reg := registration{Cloud: "aws", Issuer: f.issuer,
		Commands: []string{commandLine("aws", "iam", "create-open-id-connect-provider", "--url", f.issuer, "--client-id-list", f.audience)},
		Requests: []request{{Method: "POST", URL: "https://iam.amazonaws.com/?Action=CreateOpenIDConnectProvider", Body: input}}}
	policy := compactJSON(trust)
	if f.role != "" {
		reg.Commands = append(reg.Commands, commandLine("aws", "iam", "create-role", "--role-name", f.role, "--assume-role-policy-document", policy))
		reg.Requests = append(reg.Requests, request{Method: "POST", URL: "https://iam.amazonaws.com/?Action=CreateRole", Body: map[string]any{"RoleName": f.role, "AssumeRolePolicyDocument": policy}})
	} else {
		reg.Requests = append(reg.Requests, request{Body: trust})
		reg.Notes = append(reg.Notes, "the last body is the role trust policy: give it to aws iam create-role or update-assume-role-policy (--role prints the command)")
	}
	if len(policy) > awsTrustPolicyChars {
		reg.Notes = append(reg.Notes, fmt.Sprintf("the trust policy is %d characters, over IAM's default quota of %d: raise the quota (up to 4096) or split the service accounts over roles", len(policy), awsTrustPolicyChars))
	}
	role := f.role
	if role == "" {
		role = "ROLE"
	}
	reg.Notes = append(reg.Notes, "pods get the role through the service account annotation eks.amazonaws.com/role-arn=arn:aws:iam::"+f.accountID+":role/"+role+" and tokens for audience "+f.audience)
	return printRegistration(a.stdout, f.format, reg)
}

type registerGCPFlags struct {
	registerFlags
	projectNumber, pool, provider, role string
}

var (
	gcpNumber = regexp.MustCompile(`^[0-9]{1,20}$`)
	gcpID     = regexp.MustCompile(`^[a-z0-9-]{4,32}$`)
)

func newRegisterGCPCmd(a *app) *cobra.Command {
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
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	f.add(cmd, "")
	fl := cmd.Flags()
	fl.StringVar(&f.projectNumber, "project-number", "", "the project number (required)")
	fl.StringVar(&f.pool, "pool", "", "the workload identity pool ID (required)")
	fl.StringVar(&f.provider, "provider", "", "the provider ID (required)")
	fl.StringVar(&f.role, "role", "", "grant this role on the project to each service account's principal")
	required(cmd, "project-number", "pool", "provider")
	return cmd
}

func (f *registerGCPFlags) run(a *app) error {
	switch {
	case !gcpNumber.MatchString(f.projectNumber):
		return usage("give --project-number the number (gcloud projects describe PROJECT --format='value(projectNumber)')", "--project-number %q is not a project number", f.projectNumber)
	case !gcpID.MatchString(f.pool) || strings.HasPrefix(f.pool, "gcp-"):
		return usage("give --pool 4 to 32 lowercase letters, digits or hyphens, not starting with gcp-", "--pool %q is not a pool ID", f.pool)
	case !gcpID.MatchString(f.provider) || strings.HasPrefix(f.provider, "gcp-"):
		return usage("give --provider 4 to 32 lowercase letters, digits or hyphens, not starting with gcp-", "--provider %q is not a provider ID", f.provider)
	}
	sas, err := f.subjects()
	if err != nil {
		return err
	}
	for _, sa := range sas {
		if len(sa.Username()) > googleMaxSubject {
			return fail(nil, "map google.subject from a shorter attribute, or use a shorter namespace and name", "subject %s is %d bytes: google.subject holds at most %d", sa.Username(), len(sa.Username()), googleMaxSubject)
		}
	}
	poolName := "projects/" + f.projectNumber + "/locations/global/workloadIdentityPools/" + f.pool
	oidcCfg := map[string]any{"issuerUri": f.issuer}
	providerArgs := []string{"gcloud", "iam", "workload-identity-pools", "providers", "create-oidc", f.provider,
		"--project=" + f.projectNumber, "--location=global", "--workload-identity-pool=" + f.pool,
		"--issuer-uri=" + f.issuer, "--attribute-mapping=google.subject=assertion.sub"}
	if f.audience != "" {
		oidcCfg["allowedAudiences"] = []string{f.audience}
		providerArgs = append(providerArgs, "--allowed-audiences="+f.audience)
	}
	reg := registration{Cloud: "gcp", Issuer: f.issuer,
		Commands: []string{
			commandLine("gcloud", "iam", "workload-identity-pools", "create", f.pool, "--project="+f.projectNumber, "--location=global"),
			commandLine(providerArgs...),
		},
		Requests: []request{
			{Method: "POST", URL: "https://iam.googleapis.com/v1/projects/" + f.projectNumber + "/locations/global/workloadIdentityPools?workloadIdentityPoolId=" + f.pool, Body: map[string]any{}},
			{Method: "POST", URL: "https://iam.googleapis.com/v1/" + poolName + "/providers?workloadIdentityPoolProviderId=" + f.provider,
				Body: map[string]any{"attributeMapping": map[string]string{"google.subject": "assertion.sub"}, "oidc": oidcCfg}},
		}}
	for _, sa := range sas {
		principal := "principal://iam.googleapis.com/" + poolName + "/subject/" + sa.Username()
		if f.role != "" {
			reg.Commands = append(reg.Commands, commandLine("gcloud", "projects", "add-iam-policy-binding", f.projectNumber, "--member="+principal, "--role="+f.role))
		} else {
			reg.Notes = append(reg.Notes, "grant roles to "+principal)
		}
	}
	if f.audience == "" {
		reg.Notes = append(reg.Notes, "request the tokens for audience //iam.googleapis.com/"+poolName+"/providers/"+f.provider+" (or give --audience)")
	}
	return printRegistration(a.stdout, f.format, reg)
}

// compactJSON writes v as one line of JSON, HTML characters unescaped.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

// printRegistration writes a registration: as text, the commands and then
// each request with its body.
func printRegistration(w io.Writer, f format, reg registration) error {
	return printData(w, f, reg, func(w io.Writer) {
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
