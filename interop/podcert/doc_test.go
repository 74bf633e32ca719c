// Package podcert_test holds the proofs that ksa's podcert package agrees with
// Kubernetes: its status checker against kube-apiserver's own
// PodCertificateRequest status validation, for a table of requests and
// decisions (status_test.go), and its request checks against
// kube-apiserver's defaulting and creation validation, for a table of
// requests and a fuzz target (request_test.go).
package podcert_test
