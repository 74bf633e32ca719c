// Package podcertctl is the controller behind "ksa podcert serve": it
// watches the PodCertificateRequests of one signer name, decides each with
// a podcert.Signer, writes the status (checked beforehand as the API server
// will check it), and publishes the signer's CA as a ClusterTrustBundle
// that workloads and kube-apiserver can trust.
//
// It speaks certificates.k8s.io/v1 (Kubernetes 1.37) or v1beta1 (1.35 and
// 1.36, with the PodCertificateRequest feature gate and the v1beta1 API
// enabled), chosen by discovery unless configured. The identity it runs as
// needs the RBAC that [Manifests] renders: read the signer's requests,
// update their status, the sign and attest verbs on the signer name, and
// create or update its trust bundle.
//
// A request is decided once: the controller skips requests that already
// carry an Issued, Denied or Failed condition, and a conflict (another
// writer, a stale cache) puts the request back on the queue to be read
// again. Status writes carry the resourceVersion read, so replicas running
// side by side (no leader election) never both issue for one request: the
// second write is refused and its reader then finds the request decided.
package podcertctl
