// Package x509sa_test proves ksa's x509sa package against Kubernetes' own
// code: kube-apiserver's x509 authenticator
// (k8s.io/apiserver/pkg/authentication/request/x509 with
// CommonNameUserConversion) maps every certificate x509sa issues to the same
// user (name, UID, groups, credential-id extra) x509sa decodes; the cases
// of that authenticator's tests that apply, and how Go's crypto/x509/pkix
// encodes subjects, are table tests;
// Kubernetes' CSR validation, its kube-apiserver-client signer and its
// PodCertificateRequest status validation accept what x509sa builds and
// issues.
//
// The control-plane tier (a real kube-apiserver with --client-ca-file) is
// in package github.com/ksa-go/ksa/interop/apiserver: TestX509ClientCertificate
// and TestX509ForgedExtension.
package x509sa_test
