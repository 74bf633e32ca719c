// Package jwxkeys connects ksa's keys to jwx (github.com/lestrrat-go/jwx/v3),
// for relying parties built on it.
//
//   - [ToSet] turns ksa keys into a jwk.Set (public halves only, with kid
//     and alg), for jws.Verify with jws.WithKeySet.
//
//   - [FromSet] turns a jwk.Set into ksa keys, always through ksa's
//     public-only audit (jwks.Audit): a set holding a private or symmetric
//     member anywhere is refused whole. jwx's own jwk.PublicSetOf kept
//     symmetric keys before v3.3, and still does with WithAllowSymmetric.
//
//   - [KeyProvider] is a jws.KeyProvider over any jwks.KeySource (a remote
//     JWKS with ksa's caching and refetch limits, an oidc.Verifier's key
//     set), with the key rules of ksa's validator (tokens.KeySelector): the
//     kid selects the keys with no fallback, the alg must be asymmetric and
//     fit the key, at most MaxKeysPerToken keys are looked at per
//     signature; a refusal matches
//     the sentinel ksa's validator gives the same token, through jwx's
//     verification error.
//
//     provider, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: remote})
//     payload, err := jws.Verify(raw, jws.WithKeyProvider(provider))
//
// jws.Verify checks the signature only: the claims (issuer, audience,
// times, the kubernetes.io binding) are the caller's to check, with jwx's
// jwt package or, better, with tokens.Validator.
package jwxkeys
