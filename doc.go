// Package ksa is the identity vocabulary of the ksa module, a Go SDK for
// Kubernetes workload identity: service-account tokens, their keys and
// discovery, service-account identity in X.509 certificates, Windows GMSA
// credential specs, and cloud credentials from projected tokens.
//
// # Who
//
// Every package speaks of the same identity. A [ServiceAccount] is a
// namespace, a name and a UID; its username is
// system:serviceaccount:<namespace>:<name> ([ServiceAccount.Username],
// [ParseUsername] with Kubernetes' name rules) and its groups are
// system:serviceaccounts and system:serviceaccounts:<namespace>
// ([ServiceAccount.Groups]). An [Identity] adds what a credential proves
// beyond the account (the pod and node it was issued to, its credential
// ID), and [Identity.UserInfo] derives the user kube-apiserver
// authenticates, extras included.
//
//	sa, err := ksa.ParseUsername("system:serviceaccount:prod:billing")
//	fmt.Println(sa.Groups()) // [system:serviceaccounts system:serviceaccounts:prod]
//
// # The packages
//
//   - jwks: key IDs exactly as Kubernetes derives them, JWK and JWKS built
//     from public keys only (with an audit for any JWKS), strict JWKS
//     parsing, PEM key files, and key sources, static or remote (cached,
//     rate-limited).
//   - tokens: minting bound service-account tokens byte-identical to
//     kube-apiserver's under the TokenRequest rules, and validating them as
//     kube-apiserver does (issuers, keys, audiences, time, live bound
//     objects, stale tokens), stricter where Kubernetes is lenient; the
//     client side: a projected-token file source and a TokenRequest cache.
//   - oidc: the issuer's discovery document and JWKS as kube-apiserver
//     serves them (an http.Handler, or files for blob hosting), and the
//     relying party: discovery and a verifier for one or several issuers;
//     oidc/oidctest starts a test issuer.
//   - x509sa: service-account and pod identity in certificate subjects:
//     encoding, strict decoding, CSRs, issuing, chain verification, SPIFFE
//     IDs.
//   - credspec: Windows GMSA credential specs: types and CRD, deep-equal,
//     the effective spec per container, the admission expander and
//     authorizer, and a ready webhook handler.
//   - federation: an Azure SDK credential that exchanges projected tokens
//     for Entra ID access tokens, checking them first; federation/entratest
//     is a local Entra stand-in.
//
// # The flow
//
// A cluster signs tokens ([tokens.Minter]) with a key whose public half it
// publishes ([jwks.MarshalSet], [oidc.Handler]). Inside the cluster,
// kube-apiserver (or [tokens.Validator] with an object getter) validates them
// against live objects. Outside, a relying party discovers the issuer and
// verifies with cached remote keys ([oidc.Verifier]), getting the same
// result. A pod reads its projected token ([tokens.FileSource]) and trades it
// for cloud credentials ([federation.AzureCredential]; the same source serves
// AWS and Google SDKs).
//
// Run the whole flow on loopback with go run ./examples/quickstart.
package ksa
