// Package podcert is the library a PodCertificateRequest signer and its
// workloads are built on: Kubernetes' pod certificates
// (certificates.k8s.io/v1, GA in 1.37; v1beta1 in 1.35 and 1.36) carrying
// service-account identity as x509sa encodes it. It imports the standard
// library alone: the request, its status and conditions are this
// package's own types ([Request], [Status], [Condition]), and package
// kubeapi converts them to and from either API version's objects, so a
// workload that only serves and verifies peers builds no Kubernetes code.
//
// # Deciding
//
// The kubelet creates a PodCertificateRequest per pod; a [Signer] for the
// request's signer name decides it. Read the object with kubeapi (its
// PodCertRequest for v1, PodCertRequestV1beta1), decide, and write the
// status the decision sets (kubeapi's ApplyPodCertDecision checks it
// first):
//
//	s, err := podcert.NewSigner(podcert.SignerConfig{
//		SignerName: "example.com/workload",
//		Key:        caKey,                       // any crypto.Signer: a KMS key works
//		Chain:      []*x509.Certificate{caCert}, // the CA's certificate first
//	})
//	req, status := kubeapi.PodCertRequest(pcr)
//	if status.Outcome() == 0 {
//		d, err := s.Decide(&req) // an error: write nothing, retry later
//		if err == nil && kubeapi.ApplyPodCertDecision(&d, pcr) == nil {
//			// clientset.CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, pcr, ...)
//		}
//	}
//
// A controller decides only requests whose status records no outcome yet
// ([Status.Outcome]): the API server refuses any change to a decided one.
// The ksa command's "ksa podcert serve" is such a controller (a client-go
// informer and work queue over a Signer, publishing the CA as a
// ClusterTrustBundle), proven on real kube-apiservers.
//
// The request is checked first, with every rule kube-apiserver applies
// when it is created ([Request.Check]: the names, UIDs, signer name,
// lifetime bound and annotation keys; a test in the interop module holds
// it to Kubernetes' own validation code), then [Request.PublicKey]: the
// stub PKCS#10 request's signature (or the older proof of possession) and
// the key type (RSA 3072/4096, ECDSA P-256/P-384/P-521, Ed25519). An
// unsupported key is Denied with UnsupportedKeyType; a malformed request
// or a failed proof is Failed.
//
// An issued certificate has the subject x509sa encodes for the service
// account and the pod (CN system:serviceaccount:<ns>:<name>, O its groups,
// OU the pod, the service-account UID attribute), the SPIFFE ID
// spiffe://<trust domain>/ns/<ns>/sa/<name>, client and server auth. Its
// times satisfy every status rule: notBefore two minutes back (inside the
// API server's five-minute tolerance), a lifetime of the smallest of the
// signer's cap, maxExpirationSeconds and the CA's remaining life (never
// under an hour), beginRefreshAt halfway, at least ten minutes from
// either end.
//
// # Hosts and extensions
//
// A pod asks for serving hosts and subject extensions through the
// projection's unverifiedUserAnnotations ([DefaultServeHostsKey],
// [DefaultExtensionsKey]). Nothing there is verified, so only a [Policy]
// the operator supplies admits them; without one, any annotation denies the
// request with InvalidUnverifiedUserAnnotations, as does an unknown key.
// [HostPolicy] is the policy of an operator's settings: DNS name patterns
// whose placeholders ({namespace}, {serviceaccount}, {pod}) each stand for
// one whole, non-empty DNS label of the request, CIDRs for IP addresses,
// and extensions when allowed:
//
//	policy, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{
//		Hosts:    []string{"{serviceaccount}.{namespace}.svc"},
//		IPRanges: []string{"10.244.0.0/16"},
//	})
//	if err != nil {
//		return err // a *ksa.ConfigError naming the pattern or range
//	}
//	cfg := podcert.SignerConfig{Policy: policy} // with the signer name and the CA
//
// # Checking a status
//
// [CheckStatus] mirrors kube-apiserver's status validation rule for rule,
// for either API version (read through kubeapi); [Signer.Decide] and
// kubeapi's Apply functions run it before anything is written, so a status
// the API server would refuse never leaves the signer. A test in the
// interop module holds it to Kubernetes' own validation code.
//
// # The workload side
//
// The kubelet mounts the key and chain in one file (credentialBundlePath)
// or two (keyPath, certificateChainPath) and replaces them before expiry;
// a clusterTrustBundle projection holds the signer's trust bundle and is
// rewritten when the signer publishes a new CA. A [Source] serves the
// credential to crypto/tls and follows the replacements atomically; a
// [TrustFile] does the same for the trust bundle; [Peers] verifies the
// other side's chain against that bundle and returns its service account:
//
//	src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: "/var/run/podcert/credentialbundle.pem"})
//	roots, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: "/var/run/podcert/ca.pem"})
//	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustFile: roots})
//	srv := &http.Server{TLSConfig: peers.ServerConfig(src, nil)}
//	// in a handler: id, err := peers.Identity(r.TLS)
//
// Each handshake uses the roots the file holds when it starts, so a CA
// rotation (the next CA published in the bundle first, certificates
// issued by it later, the old CA removed once its certificates expired)
// fails no handshake. On the server's side crypto/tls verifies the
// client's chain once, during the handshake; [Peers.Identity] reads the
// identity of each request from that verified chain without verifying it
// again. Files that fail to load (a torn write, a chain that is not the
// key's, a file over the limits) leave the last good credential or bundle
// in service, and are not read again until they change.
//
// # Serving certificates from files
//
// [Source] is the module's one source of TLS credentials from files: with
// SourceConfig.AnyCertificate it serves any key and certificate pair, such
// as the tls.key and tls.crt of a cert-manager Secret mounted in a
// webhook's pod, and picks up renewals on the next handshake (no goroutine,
// no timer). A server with no certificate yet makes one with
// [SelfSigned]:
//
//	src, err := podcert.NewSource(podcert.SourceConfig{
//		KeyPath: "/etc/webhook/tls/tls.key", ChainPath: "/etc/webhook/tls/tls.crt",
//		AnyCertificate: true,
//	})
//	srv := &http.Server{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: src.GetCertificate}}
//
// # Errors and limits
//
// Every rejection matches a sentinel (ErrInvalidRequest, ErrAnnotation,
// ErrInvalidStatus, ErrInvalidBundle, ErrInvalidTrustBundle, ErrLimit,
// ErrSigning) with
// errors.Is and names what was wrong in its message; keys pod certificates
// do not allow match jwks.ErrUnsupportedKey, and refused configurations
// are a *ksa.ConfigError. A status update's problems are a list of
// *[StatusError], each naming its field. Inputs are bounded by the Max*
// constants before they are parsed; bad input never panics.
package podcert
