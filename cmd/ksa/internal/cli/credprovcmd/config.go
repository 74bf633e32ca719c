package credprovcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/credprovider/providerconfig"
)

// credProviderConfigFlags are the flags of "ksa credential-provider
// config".
type credProviderConfigFlags struct {
	name             string
	matchImages      []string
	audience         string
	args             []string
	cacheType        string
	required         []string
	optional         []string
	rbac             bool
	rbacName         string
	lint             string
	apiAudiences     []string
	grantedAudiences []string
	format           base.Format
}

func newCredentialProviderConfigCmd(a *base.App) *cobra.Command {
	f := &credProviderConfigFlags{}
	cmd := &cobra.Command{
		Use:   "config --match-image REGISTRY --audience AUDIENCE | --lint FILE",
		Short: "Print the kubelet's CredentialProviderConfig and node RBAC for ksa's plugin, or lint one",
		Long: `Print the kubelet's CredentialProviderConfig (the file of
--image-credential-provider-config) running "ksa credential-provider run" for
the registries of --match-image with a pod token for --audience, cached
per token (cacheType Token, which a pass-through requires); with --rbac,
print instead the ClusterRole and binding that let nodes request tokens for
that audience (the NodeRestriction admission refuses them otherwise). The
file is linted before it is printed.

With --lint FILE, check a CredentialProviderConfig (YAML or JSON) as the
kubelet validates it and for the known mistakes: matchImages matching every
registry, an audience kube-apiserver accepts (--api-audience), an audience
nodes are not granted (--granted-audience), a pass-through not cached per
token, ksa's plugin without tokenAttributes or verifying another audience.
One line per finding; exit status 1 when there is one.`,
		Example: `  ksa credential-provider config --match-image registry.example --audience registry.example
  ksa credential-provider config --match-image registry.example --audience registry.example --rbac
  ksa credential-provider config --lint /etc/kubernetes/credential-providers.yaml`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "ksa", "the plugin's executable in the kubelet's --image-credential-provider-bin-dir")
	fl.StringArrayVar(&f.matchImages, "match-image", nil, "a registry the plugin serves, as matchImages writes it (repeatable)")
	fl.StringVar(&f.audience, "audience", "", "the audience of the pod's token: what the registry or token endpoint checks")
	fl.StringArrayVar(&f.args, "arg", nil, "an argument after credential-provider, e.g. --arg=--backend=exchange (repeatable)")
	fl.StringVar(&f.cacheType, "cache-type", string(providerconfig.CacheToken), "tokenAttributes.cacheType: Token or ServiceAccount")
	fl.StringArrayVar(&f.required, "required-annotation", nil, "a service-account annotation key the plugin requires (repeatable)")
	fl.StringArrayVar(&f.optional, "optional-annotation", nil, "a service-account annotation key passed when present (repeatable)")
	fl.BoolVar(&f.rbac, "rbac", false, "print the nodes' RBAC for the audience instead")
	fl.StringVar(&f.rbacName, "rbac-name", "ksa-credential-provider", "the name of the ClusterRole and its binding")
	fl.StringVar(&f.lint, "lint", "", "lint this CredentialProviderConfig file instead")
	fl.StringArrayVar(&f.apiAudiences, "api-audience", nil, "kube-apiserver's --api-audiences, for --lint (repeatable; default the usual ones)")
	fl.StringArrayVar(&f.grantedAudiences, "granted-audience", nil, "an audience RBAC lets nodes request, for --lint (repeatable; default not checked)")
	base.AddManifestFlag(cmd, &f.format)
	return cmd
}

func (f *credProviderConfigFlags) run(a *base.App) error {
	if f.lint != "" {
		if len(f.matchImages) > 0 || f.audience != "" || f.rbac {
			return base.Usage("give either --lint FILE or --match-image and --audience", "--lint checks a file: --match-image, --audience and --rbac write one")
		}
		return f.runLint(a)
	}
	switch {
	case len(f.matchImages) == 0 || f.audience == "":
		return base.Usage("give --match-image REGISTRY and --audience AUDIENCE (the registry's host name, usually)", "--match-image and --audience are required")
	case f.cacheType != string(providerconfig.CacheToken) && f.cacheType != string(providerconfig.CacheServiceAccount):
		return base.Usage("give --cache-type Token or ServiceAccount", "--cache-type %q is not a cache type", base.TermSafe(f.cacheType))
	}
	cfg := &providerconfig.Config{Providers: []providerconfig.Provider{providerconfig.NewProvider(providerconfig.ProviderOptions{
		Name: f.name, MatchImages: f.matchImages, Audience: f.audience, Args: f.args,
		CacheType: providerconfig.CacheType(f.cacheType), RequiredAnnotationKeys: f.required, OptionalAnnotationKeys: f.optional,
	})}}
	if findings := providerconfig.Lint(cfg, providerconfig.LintOptions{APIAudiences: f.apiAudiences}); len(findings) > 0 {
		fd := findings[0]
		return base.Usage(fd.Fix, "the config would have %d problem(s), the first: %s %s", len(findings), fd.Field, fd.Message)
	}
	var data []byte
	var err error
	if f.rbac {
		data, err = providerconfig.NodeAudienceRBAC(f.rbacName, cfg)
	} else {
		data, err = cfg.Marshal()
	}
	if err != nil {
		return base.Fail(err, base.BugFix, "encoding the config")
	}
	if f.format == base.FormatYAML {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return base.Fail(err, base.BugFix, "encoding the config")
		}
	}
	_, err = a.Stdout.Write(data)
	return err
}

func (f *credProviderConfigFlags) runLint(a *base.App) error {
	data, err := os.ReadFile(f.lint)
	if err != nil {
		return base.Fail(err, "give --lint the kubelet's --image-credential-provider-config file", "reading --lint")
	}
	if len(data) > providerconfig.MaxConfigBytes {
		return base.Fail(nil, "give --lint the kubelet's --image-credential-provider-config file", "--lint %s is over 1 MiB", f.lint)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return base.Fail(err, "give --lint a YAML or JSON CredentialProviderConfig", "--lint %s", f.lint)
	}
	cfg, err := providerconfig.Parse(js)
	if err != nil {
		return base.Fail(err, "give --lint a CredentialProviderConfig of kubelet.config.k8s.io/v1", "--lint %s", f.lint)
	}
	var granted []string
	if len(f.grantedAudiences) > 0 {
		granted = f.grantedAudiences
	}
	findings := providerconfig.Lint(cfg, providerconfig.LintOptions{APIAudiences: f.apiAudiences, GrantedAudiences: granted})
	printFindings(a.Stdout, findings)
	if len(findings) > 0 {
		return base.Fail(nil, "correct the file as each line says", "%s: %d finding(s)", f.lint, len(findings))
	}
	fmt.Fprintf(a.Stdout, "%s: no findings\n", f.lint)
	return nil
}

func printFindings(w io.Writer, findings []*providerconfig.Finding) {
	for _, fd := range findings {
		fmt.Fprintf(w, "%s: provider %s: %s: %s; fix: %s\n", fd.Code, base.TermSafe(fd.Provider), fd.Field, base.TermSafe(fd.Message), fd.Fix)
	}
}
