// Package golangjwt plugs ksa's key sources into golang-jwt (v5), the JWT
// library of echo, gin and chi middleware, so that a relying party already
// built on it verifies Kubernetes service-account tokens with ksa's rules.
//
// [Keys] is a jwt.Keyfunc over any jwks.KeySource (a static set, a remote
// JWKS with its caching and refetch limits, an oidc.Verifier's key set):
//
//   - the token's kid selects the keys, with no fallback to other keys when
//     none has it;
//   - the header's alg must be asymmetric and fit the key (its own
//     algorithm, or one of Config.AllowedAlgorithms of its type): never
//     none, never HMAC, never an RSA alg on an EC key;
//   - a header with critical extensions ("crit") is refused: no extension
//     is understood, and RFC 7515 requires refusing a token that marks
//     one critical (golang-jwt itself ignores crit);
//   - RSA keys outside jwks' size bounds are not offered, and at most
//     MaxKeysPerToken keys are looked at for one token (those refused
//     included): the rules of tokens.KeySelector, the validator's own;
//   - a refusal matches the sentinel ksa's validator gives
//     the same token (tokens.ErrUnknownKeyID, tokens.ErrAlgorithmNotAllowed,
//     ...), through golang-jwt's own error.
//
// [ParserOptions] adds what golang-jwt leaves off by default: asymmetric
// algorithms only, a required exp, Kubernetes' leeway. [Claims] holds the
// registered claims and the kubernetes.io claim, checks what Kubernetes
// requires of a bound token (jwt calls its Validate method) and gives the
// [ksa.Identity] the token proves:
//
//	keys, err := golangjwt.NewKeys(golangjwt.Config{Keys: remote})
//	var claims golangjwt.Claims
//	opts := append(golangjwt.ParserOptions(), jwt.WithIssuer(issuer), jwt.WithAudience("vault"))
//	_, err = jwt.ParseWithClaims(raw, &claims, keys.KeyfuncContext(ctx), opts...)
//	id := claims.Identity()
//
// golang-jwt stays lenient where ksa's validator is strict (duplicate JSON
// members, invalid UTF-8, unknown header members); for those, and for
// live bound-object checks, use tokens.Validator.
package golangjwt
