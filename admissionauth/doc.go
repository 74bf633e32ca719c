// Package admissionauth verifies, in an admission webhook, that the caller
// is whom the cluster minted a token for: kube-apiserver or an aggregated
// API server holding a service-account token bound to this webhook's
// configuration (Kubernetes 1.37, alpha; KEP-6060).
//
// # What Kubernetes mints
//
// Behind kube-apiserver's alpha feature gate
// APIServerWebhookAuthenticationToken, a TokenRequest may bind a token to a
// ValidatingWebhookConfiguration or MutatingWebhookConfiguration
// (admissionregistration.k8s.io/v1). kube-apiserver v1.37.2 then requires:
// exactly one audience, not one of its own API audiences; exactly one
// attestation, admissionReviewAPIGroups, holding one API group ("*" for
// all groups, or a group name); for a group name, a webhook of the
// configuration with a rule naming that group and a URL equal to the
// audience (clientConfig.url verbatim, or for clientConfig.service
// https://NAME.NAMESPACE.svc:PORT/PATH with port 443 and path "/" by
// default: [ServiceAudience]); and that the token's service account may
// "attest" resource admissionReviewAPIGroups of group authentication.k8s.io
// under that group's name. For "*" it checks neither group nor audience
// against the webhooks: a "*" token bound to this webhook's configuration
// may be minted for another URL, so the webhook's own audience check is
// what keeps it out (the verifier always makes it). The token lives ten
// minutes. Its claims name the configuration under "kubernetes.io"
// ("validatingwebhookconfiguration" or "mutatingwebhookconfiguration", with
// name and UID) and the group under "attestations"; package tokens mints
// and validates them, and holds the claim names (which the KEP still
// proposes to rename) in one place.
//
// v1.37.2 has the minting side only: its admission webhook client does not
// yet request such a token for itself nor send one, and no service account
// of kube-apiserver's own exists (the KEP proposes kube-system/webhook-auth).
// Callers that hold a token send it as "Authorization: Bearer TOKEN". So,
// while the feature is alpha, a webhook may [Accept] tokens (verify them
// when present, let requests without one through) before it may [Require]
// them.
//
// # What the verifier checks
//
// [Verifier.Verify] takes the Authorization header and the
// AdmissionReview's request ([Review], from [ParseReview] or the webhook's
// own decoding) and checks, offline, in this order: one Bearer token
// ([ErrNoToken], [ErrAuthorization]); the token through Config.Tokens, a
// tokens.Validator or oidc.Verifier, for the one audience this webhook is
// registered under (issuer, key, signature, expiry; the live configuration
// too if the validator has an ObjectGetter): [ErrToken], wrapping the
// tokens error (tokens.ErrExpired, tokens.ErrAudienceMismatch, ...); the
// token bound to a webhook configuration ([ErrNotWebhookToken]) that is one
// of this webhook's ([*BindingError], matching [ErrBinding]); issued to an
// accepted service account ([ErrServiceAccount]); attested for "*" or for
// the very API group of request.resource ([ErrAPIGroup]).
//
//	var validator *tokens.Validator // its keys, issuer, optional ObjectGetter
//	verifier, err := admissionauth.New(admissionauth.Config{
//		Tokens:          validator.ValidateFor, // or an oidc.Verifier's VerifyFor
//		Audience:        admissionauth.ServiceAudience("ksa-system", "gmsa-webhook", 443, "/validate"),
//		Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa-webhook"}},
//		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "kube-system", Name: "webhook-auth"}},
//		Mode:            admissionauth.Accept, // Require once every caller sends tokens
//	})
//	http.Handle("/validate", verifier.Handler(h)) // h: the webhook
//
// [Verifier.Handler] is the middleware: it reads the body (at most
// MaxRequestBytes, [DefaultMaxRequestBytes] by default), parses it
// strictly ([ParseReview]), verifies, and answers a refusal with
// [StatusCode] (401 for the token, 403 for a token that may not call about
// this review, 400 and 413 for the body) without calling the handler; the
// handler gets the body intact and the [Result] through [FromContext].
// A webhook that decodes the review itself calls Verify with it and skips
// the second parse (package credspec does).
//
// # Costs
//
// Verify costs a token validation and a few comparisons; with the
// validator's result cache (tokens.CacheConfig) a repeated token costs a
// hash of it. ParseReview reads the whole body once, strictly, its cost
// linear in the body's size. BenchmarkVerifyVsBare measures both against
// the bare signature check.
package admissionauth
