package credspeccmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/credspec"
)

func New(a *base.App) *cobra.Command {
	return base.Group("credspec", "Generate GMSA credential specs and their CRD, on any OS",
		newCredspecGenerateCmd(a), newCredspecCRDCmd(a))
}

// generateFlags are the settings of "ksa credspec generate".
type generateFlags struct {
	facts      credspec.CredentialSpecConfig
	additional []string
	name, from string
	format     base.Format
}

func newCredspecGenerateCmd(a *base.App) *cobra.Command {
	f := &generateFlags{}
	cmd := &cobra.Command{
		Use:   "generate --account NAME --dns-name DOMAIN --netbios-name NAME --domain-guid GUID --domain-sid SID",
		Short: "Write a GMSACredentialSpec manifest from domain and account facts",
		Long: `Write a windows.k8s.io/v1 GMSACredentialSpec manifest holding the credential
spec PowerShell's New-CredentialSpec writes for the same account and domain,
without a domain-joined Windows host: the facts come from Get-ADDomain
(DNSRoot, NetBIOSName, ObjectGUID, DomainSID, Forest) and the gMSA's name.
GroupManagedServiceAccounts lists the account under the DNS scope, then the
NetBIOS scope, then each --additional-account. With --akv-object-id and
--akv-secret-uri the spec gets the HostAccountConfig of ccg.exe's Azure Key
Vault plug-in (non-domain-joined nodes).

With --from-file, an existing credential-spec JSON file is turned into the
manifest instead (what GenerateCredentialSpecResource.ps1 does).

The manifest is YAML; -o json writes the object as JSON.`,
		Example: `  ksa credspec generate --account WebApp01 --dns-name contoso.com --netbios-name CONTOSO \
      --domain-guid 244818ae-87ca-4fcd-92ec-e79e5252348a \
      --domain-sid S-1-5-21-2126729477-2524075714-3094792973 | kubectl apply -f -
  ksa credspec generate --from-file WebApp01.json --name webapp01`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.facts.Account, "account", "", "the gMSA's account name (sAMAccountName, trailing $ optional)")
	fl.StringVar(&f.facts.DNSName, "dns-name", "", "the domain's DNS name (Get-ADDomain DNSRoot)")
	fl.StringVar(&f.facts.NetBIOSName, "netbios-name", "", "the domain's NetBIOS name (Get-ADDomain NetBIOSName)")
	fl.StringVar(&f.facts.GUID, "domain-guid", "", "the domain's GUID (Get-ADDomain ObjectGUID)")
	fl.StringVar(&f.facts.SID, "domain-sid", "", "the domain's SID (Get-ADDomain DomainSID)")
	fl.StringVar(&f.facts.Forest, "forest", "", "the forest's DNS name (Get-ADDomain Forest; default: --dns-name)")
	fl.StringArrayVar(&f.additional, "additional-account", nil, "another gMSA as ACCOUNT@DOMAIN (repeatable)")
	fl.StringVar(&f.facts.KeyVaultObjectID, "akv-object-id", "", "Azure Key Vault plug-in: the managed identity's object ID")
	fl.StringVar(&f.facts.KeyVaultSecretURI, "akv-secret-uri", "", "Azure Key Vault plug-in: the secret URI of the account's credentials")
	fl.StringVar(&f.name, "name", "", "object name (default: the account name in lower case)")
	fl.StringVar(&f.from, "from-file", "", "turn this credential-spec JSON file into the manifest instead")
	base.AddManifestFlag(cmd, &f.format)
	return cmd
}

func (f *generateFlags) run(a *base.App, cmd *cobra.Command) error {
	for _, fl := range []string{"account", "dns-name", "netbios-name", "domain-guid", "domain-sid", "forest",
		"additional-account", "akv-object-id", "akv-secret-uri"} {
		if cmd.Flags().Changed(fl) && f.from != "" {
			return base.Usage("give the domain facts, or --from-file, not both", "--%s applies only without --from-file (the file holds the whole spec)", fl)
		}
	}
	var spec *credspec.CredentialSpec
	if f.from != "" {
		data, err := base.ReadInput(f.from, a.Stdin, credspec.MaxSize)
		switch {
		case errors.Is(err, base.ErrTooLarge):
			return base.Fail(nil, "pass the credential-spec JSON file New-CredentialSpec wrote", "%s is over the %d-byte limit", base.InputName(f.from), credspec.MaxSize)
		case errors.Is(err, fs.ErrNotExist):
			return base.Fail(nil, "check the path", "%s does not exist", f.from)
		case err != nil:
			return base.Fail(err, "pass a readable file", "reading %s", base.InputName(f.from))
		}
		if spec, err = parseSpecFile(f.from, data); err != nil {
			return err
		}
	} else {
		for _, fl := range []string{"account", "dns-name", "netbios-name", "domain-guid", "domain-sid"} {
			if !cmd.Flags().Changed(fl) {
				return base.Usage("give --"+fl+", or --from-file with a credential-spec JSON file", "--%s is required", fl)
			}
		}
		var err error
		if spec, err = f.spec(); err != nil {
			return err
		}
	}
	name := f.name
	if name == "" {
		name = spec.DefaultName()
	}
	obj := credspec.NewGMSACredentialSpec(name, spec)
	manifest, err := obj.Manifest()
	if err != nil {
		return base.Fail(nil, "give --name a lowercase DNS-1123 name, e.g. webapp01", "object name %q is not valid", name)
	}
	if f.format == base.FormatJSON {
		j, err := yaml.YAMLToJSON(manifest)
		if err != nil {
			return base.Fail(err, base.BugFix, "encoding the manifest")
		}
		return base.PrintData(a.Stdout, f.format, json.RawMessage(j), nil)
	}
	_, err = a.Stdout.Write(manifest)
	return err
}

// spec is the credential spec of the domain facts the flags give.
func (f *generateFlags) spec() (*credspec.CredentialSpec, error) {
	for _, add := range f.additional {
		name, scope, ok := strings.Cut(add, "@")
		if !ok {
			return nil, base.Usage("give ACCOUNT@DOMAIN, e.g. LogAgent@fabrikam.com", "--additional-account %q is not ACCOUNT@DOMAIN", add)
		}
		f.facts.AdditionalAccounts = append(f.facts.AdditionalAccounts, credspec.GroupManagedServiceAccount{Name: name, Scope: scope})
	}
	spec, err := credspec.NewCredentialSpec(f.facts)
	p, ok := base.AsConfigProblem(err)
	if !ok {
		return spec, err
	}
	const adFix = "read it with Get-ADDomain (DNSRoot, NetBIOSName, ObjectGUID, DomainSID, Forest) on any domain member"
	flags := base.FlagFor{"CredentialSpecConfig.Account": "--account", "CredentialSpecConfig.DNSName": "--dns-name", "CredentialSpecConfig.NetBIOSName": "--netbios-name",
		"CredentialSpecConfig.GUID": "--domain-guid", "CredentialSpecConfig.SID": "--domain-sid", "CredentialSpecConfig.Forest": "--forest",
		"CredentialSpecConfig.AdditionalAccounts": "--additional-account", "CredentialSpecConfig.KeyVaultObjectID": "--akv-object-id",
		"KeyVaultSecretURI": "--akv-secret-uri"}
	flag, _ := flags.Flag(p.Field)
	fix := map[string]string{"--account": "give the gMSA's sAMAccountName, at most 15 characters, with or without the trailing $",
		"--additional-account": "give ACCOUNT@DOMAIN, e.g. LogAgent@fabrikam.com", "--akv-object-id": "give both --akv-object-id and --akv-secret-uri, or neither"}[flag]
	if fix == "" {
		fix = adFix
	}
	return nil, base.Usage(fix, "%s %s", flag, flags.Words(p.Reason))
}

func newCredspecCRDCmd(a *base.App) *cobra.Command {
	var f base.Format
	cmd := &cobra.Command{
		Use:   "crd",
		Short: "Print the GMSACredentialSpec CustomResourceDefinition",
		Long: `Print the CustomResourceDefinition of GMSACredentialSpec
(gmsacredentialspecs.windows.k8s.io) with windows-gmsa's schema: YAML by
default, -o json for JSON.`,
		Example: `  ksa credspec crd | kubectl apply -f -
  ksa credspec crd -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error {
			if f == base.FormatJSON {
				j, err := credspec.CRDJSON()
				if err != nil {
					return base.Fail(err, base.BugFix, "encoding the CRD")
				}
				return base.PrintData(a.Stdout, f, json.RawMessage(j), nil)
			}
			_, err := fmt.Fprint(a.Stdout, string(credspec.CRD()))
			return err
		}),
	}
	base.AddManifestFlag(cmd, &f)
	return cmd
}
