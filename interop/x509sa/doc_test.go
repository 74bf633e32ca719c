// Package x509sa_test proves ksa's x509sa package against Kubernetes' own
// code: kube-apiserver's x509 authenticator
// (k8s.io/apiserver/pkg/authentication/request/x509 with
// CommonNameUserConversion) maps every certificate x509sa issues to the same
// user (name, UID, groups, credential-id extra) x509sa decodes; the
// conformance items of reference/x509sa.md §6 that apply are table tests;
// Kubernetes' CSR validation, its kube-apiserver-client signer and its
// PodCertificateRequest status validation accept what x509sa builds and
// issues.
//
// Not here: the control-plane tier (a real kube-apiserver with
// --client-ca-file). It should check, end to end over TLS:
//   - a client certificate from x509sa.Issuer authenticates as the service
//     account: SelfSubjectReview returns the username, UID, groups (plus
//     system:authenticated) and the credential-id extra x509sa computes;
//   - RBAC bound to the service account (or its groups) applies to it;
//   - a CertificateSigningRequest from NewCertificateSigningRequest, created
//     with the service account's token, records that requester in
//     spec.username/groups/uid/extra so CheckCertificateSigningRequest
//     approves it, and is refused when created by another user;
//   - CertificateSubjectRestriction still refuses system:masters for
//     kubernetes.io/kube-apiserver-client, and kube-controller-manager's
//     signer issues the client request and fails a server-auth one;
//   - with AllowParsingUserUIDFromCertAuth disabled the UID is dropped
//     (x509sa still reads it; see TestUIDFeatureGate).
package x509sa_test
