// Package registrytoken is a registry token service: the token endpoint of
// the Docker registry token authentication protocol, which authorizes a pull
// by verifying the pod's service-account token, so that a plain registry
// (CNCF distribution with auth.token) trusts workload identity without a
// cloud. It suits tests and small clusters. Standard library only.
//
// A registry configured with token auth answers an anonymous request with
// 401 and a challenge naming a realm (this service's URL), its service name
// and a scope. The client asks the realm
//
//	# HTTP request
//	GET /token?service=registry.example&scope=repository:team/app:pull
//	Authorization: Basic base64(USERNAME:SERVICE-ACCOUNT-TOKEN)
//
// with the credential the kubelet got from a credential provider: ksa
// credential-provider run --backend pass-through hands it a username and the
// pod's token as password. A Bearer service-account token is accepted too.
// The Server verifies the token with a credprovider.TokenCheck (issuer,
// signature, audience, expiry, and a pod binding unless
// InsecureSkipPodBinding), applies its Rules and answers
//
//	# JSON answer
//	{"token": JWT, "access_token": JWT, "expires_in": 300, "issued_at": "..."}
//
// where the JWT, signed by Config.Signer with header {"alg","kid","typ"},
// carries the claims the registry checks: iss (Config.Issuer, the registry's
// auth.token.issuer), sub (system:serviceaccount:NAMESPACE:NAME), aud
// (Config.Service, its auth.token.service), exp, nbf, iat, jti and access,
// [{"type":"repository","name":"team/app","actions":["pull"]}]. The kid is
// the RFC 7638 thumbprint of the public key unless Config.KeyID says
// otherwise; the registry finds the key by it, either in a JWKS file
// (auth.token.jwks, written by Server.JWKS) or among the keys of certificates
// in its rootcertbundle (which it names by the same thumbprint).
//
//	oidcVerifier, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{Issuers: []string{issuer}, Audiences: []string{"registry.example"}})
//	tokenServer, err := registrytoken.New(registrytoken.Config{
//		Issuer:  "ksa-registry-token",
//		Service: "registry.example",
//		Signer:  key,
//		Check:   credprovider.TokenCheck{Verify: oidcVerifier.VerifyFor, Audience: "registry.example"},
//		Rules: []registrytoken.Rule{
//			{Namespace: "team", ServiceAccount: "app", Repositories: []string{"team/*"}},
//		},
//	})
//	http.Handle("/token", tokenServer)
//
// # Rules
//
// A Rule names a namespace and a service account (either may be Any, "*"),
// repository patterns (path.Match: '*' never crosses a '/') and actions (pull
// alone by default; push, delete, or "*"). A scope gets the union of the
// actions of the rules that match, intersected with the actions it asks.
// A Config without rules is valid and grants nothing. A request granted part
// of what it asked gets a token for that part, as the protocol wants (the
// registry refuses the rest with 401); one granted nothing for the scopes it
// asked is refused with 403. A request without a scope (docker login) gets a
// token granting nothing once its service-account token verifies.
//
// # Refusals and limits
//
// Every refusal matches a sentinel and is answered with the status StatusFor
// gives: ErrUnauthenticated and ErrTokenRefused 401 (with a Basic
// challenge), ErrDenied 403, ErrBadRequest and ErrTooLarge 400 (405 for a
// method other than GET), ErrIssue 500. The JSON body {"error": message}
// never quotes the token, nor what the verifier said about it; Issue's error
// keeps the verifier's reason for the caller (tokens.ErrExpired, ...). Before
// anything is parsed, the query is bounded by MaxQueryBytes and the
// Authorization header by MaxAuthorizationBytes; a request names at most
// MaxScopes scopes, a scope at most MaxActions actions and a name of
// MaxNameBytes. Scopes parse strictly (ParseScope): lowercase repository
// paths of the reference grammar, lowercase actions.
//
// Registry tokens live DefaultLifetime (five minutes), Config.Lifetime
// between MinLifetime and MaxLifetime, and never past the service-account
// token's exp.
package registrytoken
