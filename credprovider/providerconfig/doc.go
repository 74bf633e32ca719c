// Package providerconfig writes and checks the kubelet's
// CredentialProviderConfig (kubelet.config.k8s.io/v1, the file of
// --image-credential-provider-config) for plugins that pull with the pod's
// token, and the RBAC that lets nodes request those tokens. Standard
// library only.
//
// [NewProvider] writes the entry of ksa's plugin: "ksa
// credential-provider run ARGS", apiVersion credentialprovider.kubelet.k8s.io/v1,
// tokenAttributes with the registry's audience, cacheType Token (what a
// pass-through requires), requireServiceAccount true and
// defaultCacheDuration 0s (the plugin says how long each answer lasts).
// [Config.Marshal] writes the file; [Parse] reads one back strictly.
//
// Since kube-apiserver 1.33 the NodeRestriction admission lets a kubelet
// request a token for an audience only when a volume of the pod names it
// or RBAC grants the node the verb [NodeAudienceVerb] on a resource of that
// name (core group); [NodeAudienceRBAC] writes the ClusterRole and its
// binding to [NodesGroup].
//
// [Lint] checks a configuration as the kubelet validates it
// ([CodeKubeletRefuses]) and for the known mistakes, each a [Finding]
// with a [Code]: a matchImages entry of globs only
// ([CodeMatchesEverything]), an audience kube-apiserver accepts
// ([CodeAPIAudience]), an audience nodes are not granted
// ([CodeAudienceNotGranted]), a pass-through cached per service account
// ([CodePassThroughCache]), and for ksa's plugin: no tokenAttributes
// ([CodeNoToken]), a verified --audience other than the requested one
// ([CodeAudienceMismatch]), pods without a service account
// ([CodeNoServiceAccount]).
//
//	cfg := &providerconfig.Config{Providers: []providerconfig.Provider{
//		providerconfig.NewProvider(providerconfig.ProviderOptions{
//			MatchImages: []string{"registry.example"}, Audience: "registry.example",
//		}),
//	}}
//	for _, f := range providerconfig.Lint(cfg, providerconfig.LintOptions{}) {
//		fmt.Println(f, "fix:", f.Fix)
//	}
//	file, err := cfg.Marshal()
//	if err != nil {
//		return err
//	}
//	rbac, err := providerconfig.NodeAudienceRBAC("ksa-credential-provider", cfg)
//	if err != nil {
//		return err
//	}
//	_, _ = file, rbac
package providerconfig
