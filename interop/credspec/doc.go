// Package credspec connects package github.com/ksa-go/ksa/credspec to a
// real API server through client-go: a credspec.Authorizer that sends
// windows-gmsa's LocalSubjectAccessReviews ([NewAuthorizer]), and a
// credspec.Source that reads GMSACredentialSpec objects with a dynamic
// client ([Source]). Its tests hold the library to Kubernetes' own code:
// the kubelet's effective security context, the API server's validation of
// windowsOptions, apiextensions' CRD validation and pruning, and the API
// server's webhook client (response checks, JSON Patch, denial messages).
//
// The tier against a real kube-apiserver is in package
// github.com/ksa-go/ksa/interop/apiserver (TestGMSAWebhook): the CRD
// installed, the webhook registered over TLS, RBAC, windows-gmsa's
// end-to-end cases and ephemeral containers.
package credspec
