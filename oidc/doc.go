// Package oidc is both sides of service-account issuer discovery: the issuer
// side publishes the OpenID discovery document and JWKS exactly as
// kube-apiserver does (or as static files for blob hosting), and the
// relying-party side discovers issuers and verifies their tokens with cached,
// rate-limited remote keys.
//
// # Issuer side
//
// [Render] produces the two documents for an issuer, jwks_uri and keys,
// byte-identical to kube-apiserver's. [Handler] serves them at
// [DiscoveryPath] and [JWKSPath] with Kubernetes' content types and
// Cache-Control, and swaps them atomically when keys rotate:
//
//	current, _ := jwks.NewKey(signer.Public())
//	previous, _ := jwks.NewKey(previousSigner.Public())
//	issuer := "https://oidc.example.com/cluster-1"
//	h, err := oidc.NewHandler(oidc.HandlerConfig{
//		Issuer:  issuer,
//		JWKSURI: oidc.JWKSURL(issuer), // https://oidc.example.com/cluster-1/openid/v1/jwks
//		Keys:    []jwks.Key{current, previous},
//	})
//	http.Handle("/cluster-1/", http.StripPrefix("/cluster-1", h))
//	// later, on rotation:
//	err = h.SetKeys(newKeys) // on error the previous documents stay
//
// For the self-managed Azure workload identity flow, [WriteStatic] writes the
// same bytes into a directory laid out for blob or CDN hosting. [JWKSURL]
// and [DiscoveryURL] derive both addresses from an issuer as relying parties
// do, trailing slash included.
//
// # Relying-party side
//
// [Discover] fetches a discovery document with the caller's *http.Client and
// context, a timeout and a size limit, and requires the exact issuer
// ([IssuerMismatchError] carries both values otherwise). Kubernetes serves
// discovery to authenticated callers only: pass BearerToken, a function
// called per request, so a pod's rotating projected token is followed.
//
// A [Verifier] discovers each issuer once, keeps a [jwks.Remote] key set per
// issuer and validates with [tokens.Validator], binding every key to its
// issuer. It answers with the same [tokens.Result] as static validation:
//
//	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
//		Issuers:   []string{"https://oidc.example.com/cluster-1"},
//		Audiences: []string{"vault"},
//		Client:    httpClient,
//	})
//	res, err := v.Verify(ctx, raw) // the JWT alone, without "Bearer "
//
// Without an Objects getter (the usual case outside the cluster) a token
// stays valid until it expires, even after its pod is deleted.
// Package tokenreview adds kube-apiserver's TokenReview after (or instead
// of) local verification, for relying parties that must notice a deleted
// pod sooner: pass the verifier's VerifyFor as its Local function.
//
// # Inside the cluster
//
// A relying party running in a pod of the cluster whose tokens it accepts
// need not know the issuer: [NewInClusterVerifier] reaches the API server
// through the kubernetes Service (KUBERNETES_SERVICE_HOST/PORT), trusts the
// mounted cluster CA alone, authenticates with the pod's rotating projected
// token (the system:service-account-issuer-discovery role lets every
// service account read discovery), and takes the issuer from the discovery
// document the API server serves. The keys are read from the API server
// too, never from a host a token or the document's jwks_uri names:
//
//	v, err := oidc.NewInClusterVerifier(ctx, oidc.InClusterConfig{
//		Verifier: oidc.VerifierConfig{Audiences: []string{"my-service"}},
//	})
//
// The remote key sets refetch when a token names an unknown key ID or the
// set goes stale, rate-limited ([jwks.DefaultRefetchBurst] fetches, then one
// per [jwks.DefaultRefetchInterval]), with concurrent misses merged into one
// request; a failed fetch keeps the keys already held, and Cache-Control
// max-age is honoured between [jwks.DefaultMinCacheAge] and
// [jwks.DefaultMaxCacheAge]. The OnFetch hook and Stats report fetches,
// failures, key count and last success.
//
// Package oidctest starts a test issuer on httptest for users' own tests.
package oidc
