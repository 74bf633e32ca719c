// Package tokens mints and validates Kubernetes service-account tokens
// exactly as kube-apiserver does.
//
// # Minting
//
// A [Minter] signs with any crypto.Signer (an in-memory key, or a KMS or HSM
// key) and applies the TokenRequest rules: a default lifetime of one hour,
// between ten minutes and 2^32 seconds, an optional cluster cap that shortens
// with a warning, the warnafter extension for the kube-api-access volume, and
// binding to a pod (with its node), a secret or a node. For the same inputs
// the token's bytes are kube-apiserver's: header {"alg","kid"} with
// Kubernetes' key ID, claims sorted as go-jose writes them.
//
//	minter, err := tokens.NewMinter(tokens.MinterConfig{
//		Issuer: "https://kubernetes.default.svc.cluster.local",
//		Signer: key, // *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey, a KMS signer...
//	})
//	tok, err := minter.Mint(ctx, tokens.Request{
//		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: saUID},
//		Audiences:      []string{"vault"},
//		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: podName, UID: podUID},
//	})
//	// tok.Raw is the JWT; tok.ExpirationTimestamp what TokenRequest reports.
//
// Callers holding the API types convert a TokenRequestSpec with
// kubeapi.RequestFromSpec; kubeapi.Manager caches TokenRequest tokens as the
// kubelet does. This package imports nothing outside the standard library.
//
// # Validation
//
// A [Validator] checks, in kube-apiserver's order: the size limit, the
// compact form and strict base64url and JSON, the issuer (several may be
// accepted), the key by kid (no fallback to other keys when the kid is
// unknown), the signature, the audiences (the intersection, in the order
// asked for), exp/nbf/iat with a one-minute leeway, and, with an
// [ObjectGetter], that the service account and the pod, secret or node the
// token is bound to still exist with the same UID. A token past its
// warnafter time is reported in [Result.Stale], never refused.
//
//	key, err := jwks.NewKey(publicKey)
//	src, err := jwks.NewStaticSource(key)
//	v, err := tokens.NewValidator(tokens.ValidatorConfig{
//		Issuers:   []string{"https://kubernetes.default.svc.cluster.local"},
//		Keys:      src,
//		Audiences: []string{"vault"},
//		Objects:   getter, // or SkipObjectCheck: true outside the cluster
//	})
//	res, err := v.Validate(ctx, raw)
//	switch {
//	case errors.Is(err, tokens.ErrExpired): // the client needs a new token
//	case errors.Is(err, tokens.ErrInvalidated): // the pod is gone
//	}
//	user := res.UserInfo() // system:serviceaccount:prod:billing, groups, pod and node extras
//
// The keys a token's signature is checked against are chosen by a
// [KeySelector]: the kid's keys (no kid: every key), a key listed twice
// once, at most MaxKeysPerToken of them looked at, RSA keys within jwks'
// bounds, and only with their own algorithm or an allowed one that fits.
// The adapters for golang-jwt and jwx (golangjwt, jwxkeys) choose keys with
// the same selector, so they refuse what the validator refuses.
//
// Beyond Kubernetes, the validator is strict where Kubernetes is lenient: the
// algorithm must be the key's own unless listed in AllowedAlgorithms (never
// none or HMAC); JSON must be strict (no duplicate or case-variant claim
// names, no invalid UTF-8, bounded depth); base64url must be canonical;
// tokens without exp, or (by default) without aud, are refused; a relying
// party must say whether it checks audiences and live objects. Every
// rejection matches a sentinel with errors.Is ([ErrExpired],
// [ErrBadSignature], ...) and its message says what was wrong; a
// [TimeError] carries the time claim at fault, an [ObjectError] the object
// that is gone, a [RequestError] the TokenRequest field; a constructor's
// refusal is a *ksa.ConfigError.
//
// # Tokens for admission webhooks (Kubernetes 1.37, alpha)
//
// Kubernetes 1.37 lets a token be bound to a ValidatingWebhookConfiguration
// or MutatingWebhookConfiguration (admissionregistration.k8s.io/v1) behind
// kube-apiserver's alpha feature gate APIServerWebhookAuthenticationToken
// (KEP-6060), so that whoever calls an admission webhook (kube-apiserver,
// an aggregated API server) can prove it. As kube-apiserver v1.37.2 mints
// them: the TokenRequest names exactly one audience, which must not be an
// API audience; it carries exactly one attestation,
// admissionReviewAPIGroups, holding one API group (a DNS subdomain, or "*"
// for all, never the empty core group); for a group other than "*", one of
// the configuration's webhooks must both have a rule naming the group and
// a URL equal to the audience (clientConfig.url verbatim, or
// https://NAME.NAMESPACE.svc:PORT/PATH for a Service, port 443 and path "/"
// by default), while for "*" v1.37.2 checks neither (a "*" token may name
// any audience but kube-apiserver's own); the service account needs the
// verb attest on resource admissionReviewAPIGroups of group
// authentication.k8s.io named by that group (or "*"); the lifetime is
// shortened, silently, to ten minutes ([WebhookExpirationSeconds]), the
// minimum of every token. The claims gain, under "kubernetes.io",
// "validatingwebhookconfiguration" or "mutatingwebhookconfiguration"
// ({"name","uid"}) and "attestations" ({"admissionReviewAPIGroups":[group]}).
// kube-apiserver's TokenReview refuses such a token while the gate is off,
// and otherwise checks the configuration's UID and deletion as for a pod.
// The KEP proposes other names ("mutatingWebhookConfiguration",
// "attestationClaims", "webhook-authentication.k8s.io/allowedAPIGroup"):
// the names v1.37.2 writes are constants of this package
// ([ClaimValidatingWebhookConfiguration] and the others), their only home.
//
// The release mints these tokens for TokenRequest callers only: v1.37.2's
// admission webhook client neither requests one for kube-apiserver nor
// sends one to webhooks, and no dedicated service account exists yet (the
// KEP proposes kube-system/webhook-auth).
//
// The [Minter] mints them (a [BoundObject] of kind
// [BoundValidatingWebhookConfiguration] or
// [BoundMutatingWebhookConfiguration] and [Request.Attestations]) byte for
// byte as kube-apiserver; the [Validator] accepts them whatever the gate
// (the audience keeps them from any API server), checks the configuration
// through the [ObjectGetter] ([KindValidatingWebhookConfiguration],
// cluster-scoped), and refuses, with [ErrInvalidClaim], what Kubernetes never
// mints: both kinds, a webhook binding beside a pod, secret or node, other
// or several attestations, a group that is not one. Package admissionauth
// verifies them where they are used: in the webhook.
//
// # Limits and defaults
//
// Tokens over [DefaultMaxTokenBytes] (16 KiB) are refused before decoding;
// time claims beyond [MaxNumericDate] are malformed; JSON is nested at most
// 16 deep. [DefaultLeeway] is one minute. The optional result cache
// ([CacheConfig]) remembers successes for [DefaultCacheTTL] (10 s, as
// kube-apiserver) in at most [DefaultCacheEntries] entries, never past the
// token's exp.
//
// Legacy Secret-based tokens are refused unless [LegacyConfig] accepts them.
package tokens
