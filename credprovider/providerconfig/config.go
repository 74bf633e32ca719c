package providerconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// The kubelet's configuration file's group version and kind.
const (
	// APIVersion is the apiVersion of the CredentialProviderConfig
	// written: kubelet.config.k8s.io/v1.
	APIVersion = "kubelet.config.k8s.io/v1"
	// Kind is the configuration file's kind.
	Kind = "CredentialProviderConfig"
)

// MaxConfigBytes bounds the configuration Parse reads: 1 MiB.
const MaxConfigBytes = 1 << 20

// CacheType is tokenAttributes.cacheType: what the kubelet adds to a
// credential's cache key when the plugin got a token.
type CacheType string

// The cache types of tokenAttributes.
const (
	// CacheToken caches per token: required when the credential is the
	// token itself (a pass-through) or lives no longer than it.
	CacheToken CacheType = "Token"
	// CacheServiceAccount caches per service account: every pod of it
	// shares the credential.
	CacheServiceAccount CacheType = "ServiceAccount"
)

// Config is the kubelet's CredentialProviderConfig
// (--image-credential-provider-config).
type Config struct {
	Providers []Provider `json:"providers"`
}

// Provider is one exec plugin of the kubelet's configuration.
type Provider struct {
	// Name is the plugin's executable in the kubelet's
	// --image-credential-provider-bin-dir.
	Name string `json:"name"`
	// MatchImages are the image patterns the plugin is run for (a host
	// whose labels may be globs, an optional port and path prefix).
	MatchImages []string `json:"matchImages"`
	// DefaultCacheDuration applies to answers without cacheDuration
	// (ksa's plugin always writes one).
	// Required by the kubelet (zero is allowed).
	DefaultCacheDuration *Duration `json:"defaultCacheDuration"`
	// APIVersion is the exec protocol's version: credprovider.APIVersion.
	APIVersion string `json:"apiVersion"`
	// Args are the plugin's arguments.
	Args []string `json:"args,omitempty"`
	// Env are variables added to the plugin's environment.
	Env []EnvVar `json:"env,omitempty"`
	// TokenAttributes, when set, make the kubelet send the pod's token.
	TokenAttributes *TokenAttributes `json:"tokenAttributes,omitempty"`
}

// EnvVar is a variable of a plugin's environment.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TokenAttributes is the token the kubelet sends a plugin.
type TokenAttributes struct {
	// ServiceAccountTokenAudience is the token's audience.
	ServiceAccountTokenAudience string `json:"serviceAccountTokenAudience"`
	// CacheType is what the kubelet caches a credential per.
	CacheType CacheType `json:"cacheType"`
	// RequireServiceAccount runs the plugin only for pods with a service
	// account; the kubelet requires it set.
	RequireServiceAccount *bool `json:"requireServiceAccount"`
	// RequiredServiceAccountAnnotationKeys must all be on the service
	// account (the kubelet does not run the plugin otherwise) and are
	// passed with the token; OptionalServiceAccountAnnotationKeys are
	// passed when present.
	RequiredServiceAccountAnnotationKeys []string `json:"requiredServiceAccountAnnotationKeys,omitempty"`
	OptionalServiceAccountAnnotationKeys []string `json:"optionalServiceAccountAnnotationKeys,omitempty"`
}

// Duration is a duration written as metav1.Duration writes it ("1h0m0s").
type Duration struct{ time.Duration }

// MarshalJSON writes the duration's Go syntax.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads the Go syntax.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// document is the file: apiVersion and kind, then the providers.
type document struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Providers  []Provider `json:"providers"`
}

// Marshal writes c as the kubelet reads it (JSON, which the kubelet takes
// as it takes YAML), indented, ending in a newline.
func (c *Config) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(document{APIVersion: APIVersion, Kind: Kind, Providers: c.Providers}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Parse reads a CredentialProviderConfig in JSON: at most MaxConfigBytes,
// apiVersion APIVersion, kind Kind, no member the kubelet does not know.
// Errors match [ErrMalformedConfig]. (A YAML file is converted to JSON
// first by the caller.)
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, malformed("the file is over the 1 MiB limit", nil)
	}
	// encoding/json matches names in any case and keeps the last of
	// duplicates; the kubelet's decoder does neither, so names are
	// checked first, exactly
	var bad error
	err := jsonx.Walk(data, 8, func(m jsonx.Member) bool {
		if bad == nil && m.Repeated {
			bad = malformed(fmt.Sprintf("%s: %q appears twice", m.Path, m.Name), nil)
		}
		if bad == nil && !knownName(m.Name) {
			bad = malformed(fmt.Sprintf("%s: unknown member %q", m.Path, m.Name), nil)
		}
		return false
	})
	if err != nil {
		return nil, malformed("", err)
	}
	if bad != nil {
		return nil, bad
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc document
	if err := dec.Decode(&doc); err != nil {
		return nil, malformed("", err)
	}
	if dec.More() {
		return nil, malformed("data after the object", nil)
	}
	if doc.APIVersion != APIVersion && doc.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		return nil, malformed("apiVersion is "+quote(doc.APIVersion)+", want "+quote(APIVersion), nil)
	}
	if doc.Kind != Kind {
		return nil, malformed("kind is "+quote(doc.Kind)+", want "+quote(Kind), nil)
	}
	return &Config{Providers: doc.Providers}, nil
}

// knownName reports whether name is a member name of the file, at any
// depth.
func knownName(name string) bool {
	switch name {
	case "apiVersion", "kind", "providers", "name", "matchImages", "defaultCacheDuration", "args", "env", "value",
		"tokenAttributes", "serviceAccountTokenAudience", "cacheType", "requireServiceAccount",
		"requiredServiceAccountAnnotationKeys", "optionalServiceAccountAnnotationKeys":
		return true
	}
	return false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ErrMalformedConfig: the file is not a CredentialProviderConfig.
var ErrMalformedConfig = errs.New(prefix, "malformed credential provider config")

const prefix = "providerconfig"

func malformed(msg string, cause error) error {
	text := errs.Text(ErrMalformedConfig)
	if msg != "" {
		text += ": " + msg
	}
	return errs.Wrap(prefix, ErrMalformedConfig, text, cause)
}

// ProviderOptions are what [NewProvider] writes an entry for ksa's plugin
// from. The zero value of every optional field is the safe choice.
type ProviderOptions struct {
	// Name is the executable's name in the kubelet's bin directory;
	// empty means "ksa".
	Name string
	// MatchImages are the registries (and paths) the plugin is run for;
	// required.
	MatchImages []string
	// Audience is the token's audience, which the registry or token
	// endpoint checks; required.
	Audience string
	// Args follow "credential-provider run" (the backend's flags).
	Args []string
	// CacheType is what the kubelet caches per; empty means CacheToken,
	// which a pass-through requires.
	CacheType CacheType
	// InsecureAllowNoServiceAccount runs the plugin for pods without a
	// service account too (it then gets no token).
	InsecureAllowNoServiceAccount bool
	// RequiredAnnotationKeys and OptionalAnnotationKeys are the service
	// account annotations passed with the token.
	RequiredAnnotationKeys, OptionalAnnotationKeys []string
}

// NewProvider returns the entry of ksa's plugin: "NAME credential-provider
// run ARGS...", the token for Audience, cached per token unless CacheType says
// otherwise, defaultCacheDuration zero (the plugin always says how long).
// It does not lint the entry: [Lint] does.
func NewProvider(opts ProviderOptions) Provider {
	name := opts.Name
	if name == "" {
		name = "ksa"
	}
	cacheType := opts.CacheType
	if cacheType == "" {
		cacheType = CacheToken
	}
	require := !opts.InsecureAllowNoServiceAccount
	return Provider{
		Name:                 name,
		MatchImages:          append([]string(nil), opts.MatchImages...),
		DefaultCacheDuration: &Duration{},
		APIVersion:           credprovider.APIVersion,
		Args:                 append([]string{"credential-provider", "run"}, opts.Args...),
		TokenAttributes: &TokenAttributes{
			ServiceAccountTokenAudience:          opts.Audience,
			CacheType:                            cacheType,
			RequireServiceAccount:                &require,
			RequiredServiceAccountAnnotationKeys: append([]string(nil), opts.RequiredAnnotationKeys...),
			OptionalServiceAccountAnnotationKeys: append([]string(nil), opts.OptionalAnnotationKeys...),
		},
	}
}
