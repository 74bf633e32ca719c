// Package credspec connects package github.com/ksa-go/ksa/credspec to a
// real API server through client-go: a credspec.Authorizer that sends
// windows-gmsa's LocalSubjectAccessReviews ([NewAuthorizer]), and a
// credspec.Source that reads GMSACredentialSpec objects with a dynamic
// client ([Source]). Its tests hold the library to Kubernetes' own code:
// the kubelet's effective security context, the API server's validation of
// windowsOptions, apiextensions' CRD validation and pruning, and the API
// server's webhook client (response checks, JSON Patch, denial messages).
//
// Not done yet: the tier against a real kube-apiserver (package
// controlplane). It needs: the CRD from credspec.CRD applied and
// Established; GMSACredentialSpec objects of v1 and v1alpha1; the handler
// served over TLS with a CA bundle in a MutatingWebhookConfiguration
// (/mutate: pods CREATE, pods/ephemeralcontainers UPDATE) and a
// ValidatingWebhookConfiguration (/validate: pods CREATE and UPDATE,
// pods/ephemeralcontainers UPDATE), failurePolicy Fail, sideEffects None,
// admissionReviewVersions [v1, v1beta1]; RBAC for the webhook (get
// gmsacredentialspecs, create localsubjectaccessreviews) and a ClusterRole
// granting use with resourceNames, bound per namespace; then pods created
// as different service accounts and users (reference/gmsa.md §4.F cases
// 33-45 run for real), and kubectl debug for ephemeral containers.
package credspec
