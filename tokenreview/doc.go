// Package tokenreview validates service-account tokens with kube-apiserver's
// TokenReview API, after local validation or instead of it.
//
// Local validation (package tokens, or oidc's Verifier) proves a token was
// signed by the issuer and is meant for the relying party, but without
// access to the cluster's objects it accepts a token until it expires, even
// after its pod was deleted. Relying parties that must notice that sooner
// (Vault's Kubernetes auth, SPIRE's attestor) ask kube-apiserver.
//
// # Modes
//
//   - Local only: no review; use tokens.Validator or oidc.Verifier directly.
//     The default, and the only mode that keeps working while the apiserver
//     is down.
//   - [LocalThenReview]: signature, issuer, audiences and times are checked
//     locally first, so forged, expired and foreign tokens never reach the
//     apiserver; then the review tells whether the token is still live, and
//     its answer must agree with the token (service account and UID, pod
//     name and UID, audiences among those asked).
//   - [ReviewOnly]: the apiserver alone decides; for relying parties without
//     the issuer's keys. Every token, forged or not, costs a request.
//
// A review that cannot be made refuses the token ([ErrReviewFailed]): the
// validator fails closed. kube-apiserver caches a successful review for 10
// seconds per token and audiences, so a token reviewed just before its pod
// was deleted may pass once more within that window.
//
// # Wiring
//
// The [Reviewer] interface has one method; this package needs no
// Kubernetes types. Package kubeapi converts a [Request] into an
// authentication/v1 TokenReview and its answer into a [Status], so a
// client-go reviewer is a few lines (see the example):
//
//	local, _ := oidc.NewVerifier(ctx, oidc.VerifierConfig{Issuers: []string{issuer}, Audiences: []string{"vault"}})
//	v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{
//		Local:     local.VerifyFor, // LocalThenReview is the zero Mode
//		Reviewer:  reviewer,
//		Audiences: []string{"vault"},
//	})
//	res, err := v.Validate(ctx, raw)
//
// The identity of an answer is read with [IdentityOf], the inverse of
// ksa.Identity.UserInfo. The caller needs RBAC permission to create
// tokenreviews (the system:auth-delegator cluster role).
package tokenreview
