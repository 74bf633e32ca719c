// Package jwks holds verification keys: key IDs derived exactly as
// Kubernetes derives them, JWK and JWKS documents built from public keys only,
// an audit for any JWKS document, strict JWKS parsing for relying parties,
// public keys from PEM, and the [KeySource] seam token validation uses.
// Private signing keys, and key files, are package keystore's.
//
// # Key IDs
//
// [KeyID] is Kubernetes' kid: unpadded base64url of the SHA-256 of the DER
// SubjectPublicKeyInfo. [Thumbprint] is the RFC 7638 thumbprint other issuers
// use.
//
//	kid, err := jwks.KeyID(key) // public key, private key or crypto.Signer
//
// # Publishing keys
//
// [NewKey] reduces any key to its public half and derives its kid and default
// algorithm (RS256, ES256/384/512, EdDSA). [MarshalSet] writes the JWKS
// kube-apiserver serves, byte for byte: members written from public values
// through a fixed list per key type, so private material cannot reach the
// output. [Audit] checks any JWKS document, ours or anyone's, for private or
// symmetric members (d, p, q, dp, dq, qi, oth, k) and unknown key types.
//
//	key, err := jwks.NewKey(signer)
//	doc, err := jwks.MarshalSet([]jwks.Key{key})
//	if err := jwks.Audit(doc); err != nil {
//		return err // private material: never publish the document
//	}
//
// # Reading keys
//
// [ParseSet] reads a JWKS for verification, strictly: the document must be
// strict JSON within [DefaultMaxSetBytes] and [DefaultMaxKeys]; keys that
// cannot be used (unknown types or curves, RSA outside [MinRSABits]..[MaxRSABits], private
// members, bad encodings, points off the curve) are skipped one by one with
// the reason in [Set.Skipped]. [ParsePublicKeysPEM] reads PEM data as
// kube-apiserver reads --service-account-key-file (keystore.LoadPublicKeysFile
// reads the file; keystore.LoadSigningKeyFile reads
// --service-account-signing-key-file).
//
// # Key sources
//
// A [KeySource] answers Keys(ctx, kid). [StaticSource] serves a fixed list:
// a kid selects exactly the keys with that ID (no fallback to the others, as
// in Kubernetes); no kid selects all keys.
//
//	current, err := jwks.NewKey(signer.Public())
//	previous, err := jwks.NewKey(previousSigner.Public())
//	src, err := jwks.NewStaticSource(current, previous)
//	v, err := tokens.NewValidator(tokens.ValidatorConfig{
//		Issuers: []string{issuer}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true,
//	})
//
// [Remote] serves the key set at a URL (an OIDC discovery document's
// jwks_uri): fetched on first use, kept while fresh (Cache-Control
// max-age within bounds, [DefaultCacheAge] without one), fetched again when
// a token names a key ID it does not know, and answering from stale keys
// for at most [DefaultMaxStale] while the issuer fails. Fetches are
// rate-limited ([DefaultRefetchBurst], then one per
// [DefaultRefetchInterval]), so tokens with made-up key IDs cannot flood
// the issuer: while the limit holds, an unknown key ID is refused with a
// [*RateLimitError] whose Next says when the set may be fetched again.
//
//	remote, err := jwks.NewRemote(jwks.RemoteConfig{URL: "https://issuer.example/openid/v1/jwks"})
//	keys, err := remote.Keys(ctx, kid)
package jwks
