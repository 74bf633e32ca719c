// Package tokenexchange exchanges a pod's service-account token for a
// registry's credential at an OAuth 2.0 token endpoint (RFC 8693), and is
// a credential provider for the kubelet built on it (package
// credprovider). Standard library only.
//
// An [Exchanger] posts the token as subject_token (type
// urn:ietf:params:oauth:token-type:jwt), with the audience, resource and
// scope its [Config] names, and reads the answer: access_token, required;
// expires_in, counted from the moment the request was sent. The endpoint
// must be https; every exchange is bounded by the client's timeout
// ([DefaultTimeout] when Config.Client is nil, well under the kubelet's
// minute) and the answer by [DefaultMaxResponseBytes].
//
//	ex, err := tokenexchange.New(tokenexchange.Config{
//		TokenURL: "https://registry.example/oauth2/exchange",
//		Audience: "registry.example",
//	})
//	if err != nil {
//		return err
//	}
//	plugin, err := tokenexchange.Provider(tokenexchange.ProviderConfig{
//		Exchanger: ex, Username: "oauth2accesstoken",
//		Cache: credprovider.Cache{For: time.Hour},
//	})
//	if err != nil {
//		return err
//	}
//	return credprovider.Run(ctx, os.Stdin, os.Stdout, plugin)
//
// The credential is cached by the kubelet no longer than the issued token
// and the pod's token live (credprovider.Respond). Errors match
// [ErrExchangeFailed], [ErrRefused] (a *[RefusedError] with the endpoint's
// OAuth error) or [ErrBadResponse]; none quotes a token.
package tokenexchange
