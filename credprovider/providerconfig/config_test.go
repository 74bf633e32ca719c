package providerconfig_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider/providerconfig"
)

func ksaProvider(mod func(*providerconfig.Provider)) *providerconfig.Config {
	p := providerconfig.NewProvider(providerconfig.ProviderOptions{MatchImages: []string{"registry.example"}, Audience: "registry.example"})
	if mod != nil {
		mod(&p)
	}
	return &providerconfig.Config{Providers: []providerconfig.Provider{p}}
}

func TestMarshalParse(t *testing.T) {
	cfg := ksaProvider(nil)
	data, err := cfg.Marshal()
	require.NoError(t, err)
	assert.JSONEq(t, `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{
		"name":"ksa","matchImages":["registry.example"],"defaultCacheDuration":"0s",
		"apiVersion":"credentialprovider.kubelet.k8s.io/v1","args":["credential-provider","run"],
		"tokenAttributes":{"serviceAccountTokenAudience":"registry.example","cacheType":"Token","requireServiceAccount":true}}]}`, string(data))
	back, err := providerconfig.Parse(data)
	require.NoError(t, err)
	assert.Equal(t, cfg, back)

	for name, bad := range map[string]string{
		"unknown field": `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"a","matchimages":[]}]}`,
		"kind":          `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"KubeletConfiguration","providers":[]}`,
		"apiVersion":    `{"apiVersion":"v1","kind":"CredentialProviderConfig","providers":[]}`,
		"duration":      `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"defaultCacheDuration":"soon"}]}`,
		"trailing":      `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[]} {}`,
		"too large":     string(make([]byte, providerconfig.MaxConfigBytes+1)),
	} {
		_, err := providerconfig.Parse([]byte(bad))
		require.ErrorIs(t, err, providerconfig.ErrMalformedConfig, name)
	}
}

func TestLint(t *testing.T) {
	no := false
	tests := []struct {
		name string
		mod  func(*providerconfig.Provider)
		opts providerconfig.LintOptions
		want []providerconfig.Code
	}{
		{name: "generated entry is clean"},
		{name: "every registry", mod: func(p *providerconfig.Provider) { p.MatchImages = []string{"*", "*.*:5000/x", "*.example"} },
			want: []providerconfig.Code{providerconfig.CodeMatchesEverything, providerconfig.CodeMatchesEverything}},
		{name: "API audience", mod: func(p *providerconfig.Provider) {
			p.TokenAttributes.ServiceAccountTokenAudience = "https://kubernetes.default.svc"
		}, want: []providerconfig.Code{providerconfig.CodeAPIAudience}},
		{name: "cluster's own API audience", opts: providerconfig.LintOptions{APIAudiences: []string{"registry.example"}},
			want: []providerconfig.Code{providerconfig.CodeAPIAudience}},
		{name: "audience not granted", opts: providerconfig.LintOptions{GrantedAudiences: []string{"other"}},
			want: []providerconfig.Code{providerconfig.CodeAudienceNotGranted}},
		{name: "audience granted by wildcard", opts: providerconfig.LintOptions{GrantedAudiences: []string{"*"}}},
		{name: "pass-through cached per service account", mod: func(p *providerconfig.Provider) {
			p.TokenAttributes.CacheType = providerconfig.CacheServiceAccount
		}, want: []providerconfig.Code{providerconfig.CodePassThroughCache}},
		{name: "exchange cached per service account", mod: func(p *providerconfig.Provider) {
			p.TokenAttributes.CacheType = providerconfig.CacheServiceAccount
			p.Args = append(p.Args, "--backend=exchange", "--token-url", "https://t.example")
		}},
		{name: "no token", mod: func(p *providerconfig.Provider) { p.TokenAttributes = nil },
			want: []providerconfig.Code{providerconfig.CodeNoToken}},
		{name: "another plugin without token", mod: func(p *providerconfig.Provider) { p.TokenAttributes = nil; p.Args = nil }},
		{name: "verifies another audience", mod: func(p *providerconfig.Provider) {
			p.Args = append(p.Args, "--issuer", "https://i.example", "--keys", "k.pub", "--audience", "other")
		}, want: []providerconfig.Code{providerconfig.CodeAudienceMismatch}},
		{name: "pods without service account", mod: func(p *providerconfig.Provider) { p.TokenAttributes.RequireServiceAccount = &no },
			want: []providerconfig.Code{providerconfig.CodeNoServiceAccount}},
		{name: "what the kubelet refuses", mod: func(p *providerconfig.Provider) {
			p.Name = "bin/ksa"
			p.APIVersion = "credentialprovider.kubelet.k8s.io/v1beta1"
			p.DefaultCacheDuration = nil
			p.MatchImages = nil
			p.TokenAttributes.CacheType = "Pod"
			p.TokenAttributes.RequireServiceAccount = nil
			p.TokenAttributes.ServiceAccountTokenAudience = ""
		}, want: []providerconfig.Code{"kubelet-refuses", "kubelet-refuses", "kubelet-refuses", "kubelet-refuses", "kubelet-refuses", "kubelet-refuses", "kubelet-refuses"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []providerconfig.Code
			for _, f := range providerconfig.Lint(ksaProvider(tt.mod), tt.opts) {
				got = append(got, f.Code)
				require.ErrorIs(t, f, providerconfig.ErrFinding)
				assert.NotEmpty(t, f.Fix)
				var target *providerconfig.Finding
				require.True(t, errors.As(error(f), &target))
			}
			assert.Equal(t, tt.want, got)
		})
	}
	two := ksaProvider(nil)
	two.Providers = append(two.Providers, two.Providers[0])
	fs := providerconfig.Lint(two, providerconfig.LintOptions{})
	require.Len(t, fs, 1)
	assert.Equal(t, providerconfig.CodeKubeletRefuses, fs[0].Code)
	assert.Equal(t, []string{"https://kubernetes.default.svc", "https://kubernetes.default.svc.cluster.local", "kubernetes.default.svc"}, providerconfig.DefaultAPIAudiences())
}

func TestNodeAudienceRBAC(t *testing.T) {
	cfg := ksaProvider(nil)
	cfg.Providers = append(cfg.Providers, providerconfig.NewProvider(providerconfig.ProviderOptions{Name: "b", MatchImages: []string{"b.example"}, Audience: "a.example"}))
	data, err := providerconfig.NodeAudienceRBAC("ksa-credential-provider", cfg)
	require.NoError(t, err)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(data, &list))
	require.Len(t, list.Items, 2)
	assert.Equal(t, []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"a.example", "registry.example"},
		"verbs": []any{"request-serviceaccounts-token-audience"}}}, list.Items[0]["rules"])
	assert.Equal(t, []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:nodes"}}, list.Items[1]["subjects"])
}

// The entry of ksa's plugin for one registry, linted.
func ExampleLint() {
	p := providerconfig.NewProvider(providerconfig.ProviderOptions{
		MatchImages: []string{"*.*"}, Audience: "registry.example",
		CacheType: providerconfig.CacheServiceAccount,
	})
	cfg := &providerconfig.Config{Providers: []providerconfig.Provider{p}}
	for _, f := range providerconfig.Lint(cfg, providerconfig.LintOptions{}) {
		fmt.Println(f.Code, "-", f.Field, "- fix:", f.Fix)
	}
	fmt.Println(p.TokenAttributes.CacheType, *p.TokenAttributes.RequireServiceAccount, p.DefaultCacheDuration.Duration == 0*time.Second)
	// Output:
	// matches-everything - matchImages - fix: name the registry (registry.example, *.registry.example)
	// pass-through-cache - tokenAttributes.cacheType - fix: set cacheType: Token
	// ServiceAccount true true
}
