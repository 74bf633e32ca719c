// Package credprovider is the kubelet's image credential provider protocol,
// credentialprovider.kubelet.k8s.io/v1, for plugins that pull images with
// the pod's own identity: the request the kubelet writes to a plugin's
// standard input, the response the plugin writes back, the rules that keep
// the kubelet's cache of that response safe, the plugin's main loop, and
// the offline check of the service-account token the kubelet sends. It
// imports the standard library and ksa's core packages only, so a plugin
// built on it links no Kubernetes module.
//
// # The exchange
//
// For each image a provider's matchImages covers, and whose credential is
// not cached, the kubelet runs the plugin named in its
// CredentialProviderConfig and writes one request:
//
//	# the kubelet's request, on the plugin's standard input
//	{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1",
//	 "image":"registry.example/team/app:v1",
//	 "serviceAccountToken":"eyJ...",
//	 "serviceAccountAnnotations":{"registry.example/role":"puller"}}
//
// The token and annotations are there only when the provider's config sets
// tokenAttributes: the kubelet then requests a token of the pod's service
// account for tokenAttributes.serviceAccountTokenAudience, bound to the
// pod, and passes the service account's annotations whose keys the config
// lists. [DecodeRequest] reads the request strictly: at most
// [MaxRequestBytes], apiVersion [APIVersion] and kind [RequestKind], no
// unknown, duplicate or case-variant member, an image. The kubelet kills
// a plugin after one minute, and pulls without credentials when it fails.
//
// # The answer and the kubelet's cache
//
// The plugin answers with credentials for the image's registry, a
// cacheKeyType ([CacheImage], [CacheRegistry] or [CacheGlobal]) and a
// cacheDuration. The kubelet keeps the answer for cacheDuration under the
// key type's key and, whenever the request carried a token, also under the
// service account's namespace, name, UID and listed annotations: an answer
// is never reused for another service account. With tokenAttributes.cacheType
// "Token" the key also holds the token's hash, so each token gets its own
// answer; with "ServiceAccount" every pod of the service account shares
// one. The kubelet refuses an answer whose password is the token itself
// unless cacheType is "Token".
//
// [Respond] builds the answer so that the cache cannot outlive the
// credential: cacheDuration is what [Cache].For asks, shortened to the
// credential's expiry and, for a request that carried a token, to the
// token's (its warnafter time when kube-apiserver extended the token to a
// year), and always written, so that the provider's defaultCacheDuration,
// which knows nothing of the credential, never applies. The zero [Cache]
// asks for no caching. [PassThrough] answers with the pod's token as the
// password, for registries that verify service-account tokens themselves;
// its provider's config must say cacheType "Token".
//
// # A plugin
//
// [Run] is the plugin's main loop: decode, ask the [Provider], write the
// answer; on failure nothing is written to stdout and the error, which
// never quotes a token or credential, is for one line of stderr.
// [CheckToken] verifies the request's token before any exchange, offline,
// with a [tokens.Validator] (keys the plugin holds) or an [oidc.Verifier]
// (keys discovered from the issuer): signature, issuer, the provider's
// audience, expiry, and the binding to a pod.
//
//	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
//		Issuers: []string{issuer}, Keys: remote,
//		Audiences: []string{"registry.example"}, SkipObjectCheck: true,
//	})
//	if err != nil {
//		return err
//	}
//	plugin := credprovider.ProviderFunc(func(ctx context.Context, req *credprovider.Request) (*credprovider.Response, error) {
//		check := credprovider.TokenCheck{Verify: validator.ValidateFor, Audience: "registry.example"}
//		if _, err := credprovider.CheckToken(ctx, req, check); err != nil {
//			return nil, err
//		}
//		return credprovider.PassThrough(req, "k8s", credprovider.Cache{For: time.Hour}, nil)
//	})
//	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
//	defer cancel()
//	if err := credprovider.Run(ctx, os.Stdin, os.Stdout, plugin); err != nil {
//		fmt.Fprintln(os.Stderr, err)
//		os.Exit(1)
//	}
//
// Package [github.com/ksa-go/ksa/credprovider/tokenexchange] exchanges the
// token for a registry's own credential (RFC 8693), and `ksa
// credential-provider run` is a plugin built on both.
//
// # Errors
//
// Every refusal matches a sentinel: [ErrMalformedRequest],
// [ErrRequestTooLarge], [ErrNoToken], [ErrTokenRefused] (wrapping the
// verifier's reason, such as tokens.ErrExpired), [ErrInvalidResponse]; a
// [TokenCheck] without its required fields is a *ksa.ConfigError. Run
// returns a provider's own error as it is.
package credprovider
