package providerconfig

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/internal/errs"
)

// Code names a kind of [Finding].
type Code string

// The findings of [Lint].
const (
	// CodeKubeletRefuses: the kubelet's own validation refuses the entry
	// (it then starts no provider at all).
	CodeKubeletRefuses Code = "kubelet-refuses"
	// CodeMatchesEverything: a matchImages entry whose host is all
	// globs ("*", "*.*"...) runs the plugin, and sends a pod token, for
	// every image of registries of that shape.
	CodeMatchesEverything Code = "matches-everything"
	// CodeAPIAudience: the token's audience is one kube-apiserver accepts
	// (its --api-audiences): the registry could use the pod's token against
	// the API.
	CodeAPIAudience Code = "api-audience"
	// CodeAudienceNotGranted: no RBAC grant lets nodes request tokens for
	// the audience; NodeRestriction refuses the kubelet's TokenRequest.
	CodeAudienceNotGranted Code = "audience-not-granted"
	// CodePassThroughCache: a pass-through whose cacheType is not Token:
	// the kubelet refuses the token as a password (and would otherwise
	// share one pod's token among the service account's pods).
	CodePassThroughCache Code = "pass-through-cache"
	// CodeNoToken: ksa's plugin without tokenAttributes gets no token
	// and fails every pull.
	CodeNoToken Code = "no-token"
	// CodeAudienceMismatch: the plugin verifies another audience
	// (--audience) than the kubelet requests.
	CodeAudienceMismatch Code = "audience-mismatch"
	// CodeNoServiceAccount: requireServiceAccount is false: pods without
	// a service account run ksa's plugin without a token, which fails.
	CodeNoServiceAccount Code = "no-service-account"
)

// ErrFinding matches every [Finding] used as an error.
var ErrFinding = errs.New(prefix, "credential provider config finding")

// Finding is one problem of a configuration. It is an error matching
// [ErrFinding].
type Finding struct {
	Code Code
	// Provider is the entry's name; Field the field at fault
	// ("tokenAttributes.cacheType").
	Provider, Field string
	// Message says what is wrong, Fix how to put it right.
	Message, Fix string
}

func (f *Finding) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("provider %q: %s: %s (%s)", f.Provider, f.Field, f.Message, f.Code), nil)
}

// Is matches ErrFinding.
func (f *Finding) Is(target error) bool { return target == ErrFinding }

// defaultAPIAudiences are kube-apiserver's usual API audiences.
var defaultAPIAudiences = []string{"https://kubernetes.default.svc", "https://kubernetes.default.svc.cluster.local", "kubernetes.default.svc"}

// DefaultAPIAudiences returns the audiences Lint treats as kube-apiserver's
// when LintOptions.APIAudiences is nil.
func DefaultAPIAudiences() []string { return slices.Clone(defaultAPIAudiences) }

// LintOptions are what [Lint] knows of the cluster.
type LintOptions struct {
	// APIAudiences are kube-apiserver's --api-audiences (and its issuer,
	// the default); nil means DefaultAPIAudiences.
	APIAudiences []string
	// GrantedAudiences are the audiences RBAC lets nodes request tokens
	// for ("*" for all); nil means not checked.
	GrantedAudiences []string
}

// Lint checks c as the kubelet validates it, then for the known mistakes:
// a match of every image, the API's audience, an audience nodes may not
// request, a pass-through cached per service account, ksa's plugin
// without a token or verifying another audience. It returns the
// findings, in the providers' order.
func Lint(c *Config, opts LintOptions) []*Finding {
	apiAuds := opts.APIAudiences
	if apiAuds == nil {
		apiAuds = defaultAPIAudiences
	}
	var out []*Finding
	seen := map[string]bool{}
	for _, p := range c.Providers {
		add := func(code Code, field, fix, format string, args ...any) {
			out = append(out, &Finding{Code: code, Provider: p.Name, Field: field, Message: fmt.Sprintf(format, args...), Fix: fix})
		}
		refused := func(field, fix, format string, args ...any) { add(CodeKubeletRefuses, field, fix, format, args...) }
		switch {
		case p.Name == "" || p.Name == "." || p.Name == ".." || strings.ContainsAny(p.Name, "/ "):
			refused("name", "name the plugin's executable in --image-credential-provider-bin-dir", "%q is not a file name", p.Name)
		case seen[p.Name]:
			refused("name", "give each provider its own name", "%q is named twice", p.Name)
		}
		seen[p.Name] = true
		if p.APIVersion != credprovider.APIVersion {
			refused("apiVersion", "set apiVersion: "+credprovider.APIVersion, "%q is not %s", p.APIVersion, credprovider.APIVersion)
		}
		if p.DefaultCacheDuration == nil {
			refused("defaultCacheDuration", "set defaultCacheDuration: 0s (ksa's plugin says how long each answer lasts)", "is required")
		} else if p.DefaultCacheDuration.Duration < 0 {
			refused("defaultCacheDuration", "set defaultCacheDuration: 0s", "is negative")
		}
		if len(p.MatchImages) == 0 {
			refused("matchImages", "list the registries the plugin serves", "is empty")
		}
		for _, m := range p.MatchImages {
			u, err := url.Parse("https://" + m)
			if err != nil {
				refused("matchImages", "write a registry host, optionally with :port and /path", "%q does not parse", m)
				continue
			}
			host := u.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if allGlobs(host) {
				add(CodeMatchesEverything, "matchImages", "name the registry (registry.example, *.registry.example)",
					"%q matches every registry of its shape: every pull of those sends a pod's token to this plugin", m)
			}
		}
		lintTokens(p, apiAuds, opts.GrantedAudiences, add)
	}
	return out
}

func lintTokens(p Provider, apiAuds, granted []string, add func(Code, string, string, string, ...any)) {
	refused := func(field, fix, format string, args ...any) { add(CodeKubeletRefuses, field, fix, format, args...) }
	ours, backend, verified := ksaArgs(p.Args)
	ta := p.TokenAttributes
	if ta == nil {
		if ours {
			add(CodeNoToken, "tokenAttributes", "set tokenAttributes (ksa credential-provider config writes them)", "is not set: ksa's plugin gets no token and fails every pull")
		}
		return
	}
	aud := ta.ServiceAccountTokenAudience
	if aud == "" {
		refused("tokenAttributes.serviceAccountTokenAudience", "set the audience the registry checks", "is required")
	}
	if ta.RequireServiceAccount == nil {
		refused("tokenAttributes.requireServiceAccount", "set requireServiceAccount: true", "is required")
	} else if !*ta.RequireServiceAccount {
		if len(ta.RequiredServiceAccountAnnotationKeys) > 0 {
			refused("tokenAttributes.requireServiceAccount", "set requireServiceAccount: true", "is false while requiredServiceAccountAnnotationKeys is set")
		}
		if ours {
			add(CodeNoServiceAccount, "tokenAttributes.requireServiceAccount", "set requireServiceAccount: true", "is false: pods without a service account run ksa's plugin without a token, and it fails")
		}
	}
	switch ta.CacheType {
	case CacheToken, CacheServiceAccount:
	default:
		refused("tokenAttributes.cacheType", "set cacheType: Token", "%q is not Token or ServiceAccount", ta.CacheType)
	}
	for _, k := range ta.RequiredServiceAccountAnnotationKeys {
		if slices.Contains(ta.OptionalServiceAccountAnnotationKeys, k) {
			refused("tokenAttributes.optionalServiceAccountAnnotationKeys", "list each key once", "%q is both required and optional", k)
		}
	}
	if aud != "" && slices.Contains(apiAuds, aud) {
		add(CodeAPIAudience, "tokenAttributes.serviceAccountTokenAudience", "use the registry's own audience (its host name)",
			"%q is an audience kube-apiserver accepts: the registry could use pods' tokens against the API", aud)
	}
	if aud != "" && granted != nil && !slices.Contains(granted, aud) && !slices.Contains(granted, "*") {
		add(CodeAudienceNotGranted, "tokenAttributes.serviceAccountTokenAudience", "apply the RBAC of 'ksa credential-provider config --rbac'",
			"nodes may not request tokens for %q: NodeRestriction refuses the kubelet's TokenRequest", aud)
	}
	if ours && backend == "pass-through" && ta.CacheType == CacheServiceAccount {
		add(CodePassThroughCache, "tokenAttributes.cacheType", "set cacheType: Token",
			"is ServiceAccount on a pass-through: the kubelet refuses the pod's token as a password unless cacheType is Token")
	}
	if ours && verified != "" && aud != "" && verified != aud {
		add(CodeAudienceMismatch, "args", "give --audience "+aud, "--audience %q is not the audience the kubelet requests (%q): every token is refused", verified, aud)
	}
}

// ksaArgs reports whether args run ksa's plugin, with its backend and
// the audience it verifies ("" when it does not).
func ksaArgs(args []string) (ours bool, backend, audience string) {
	if len(args) < 2 || args[0] != "credential-provider" || args[1] != "run" {
		return false, "", ""
	}
	backend = "pass-through"
	for i := 2; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "--backend":
			backend = value
		case "--audience":
			audience = value
		}
	}
	return true, backend, audience
}

// allGlobs reports whether every label of host is "*".
func allGlobs(host string) bool {
	for _, label := range strings.Split(host, ".") {
		if label != "*" {
			return false
		}
	}
	return true
}
