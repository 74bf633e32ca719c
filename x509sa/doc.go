// Package x509sa carries Kubernetes service-account (and pod) identity in
// X.509 certificates: it encodes an identity into a certificate subject that
// kube-apiserver's x509 authenticator maps to exactly that service account,
// decodes it back with full validation, builds certificate requests, checks
// requests against their requester on the approver side, issues
// certificates from requests with a CA key, and verifies chains for client
// or server authentication. It imports the standard library alone: the
// CertificateSigningRequest objects of certificates.k8s.io/v1 are made,
// checked and read by package kubeapi, on top of this one.
//
// # The subject
//
// A [Subject] is a service account ([ksa.ServiceAccount], UID optional), an
// optional pod name and optional caller extensions. It is laid out as
// kube-apiserver reads it:
//
//	# attribute  value
//	CN  system:serviceaccount:<namespace>:<name>
//	O   system:serviceaccounts, system:serviceaccounts:<namespace>
//	OU  system:pod-namespace=<namespace>, system:pod-name=<pod>, <key>=<value>...
//	1.3.6.1.4.1.57683.2  <service-account UID>
//
// kube-apiserver takes the username from CN, the groups from O and the UID
// from the attribute 1.3.6.1.4.1.57683.2, and adds the credential ID
// X509SHA256=<hex> ([CredentialID]). [DecodeName] refuses anything that
// would make Kubernetes and this package disagree, or that a requester could
// use to claim more than its identity: a second CN, an extra group (such as
// system:masters), an unknown attribute, a UID that is empty or repeated, an
// extension forging a "system:" entry. Groups are compared as a set, since
// DER sorts the values of a multi-valued attribute.
//
//	sa := ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"}
//	name, err := x509sa.Subject{ServiceAccount: sa, PodName: "cart-7d9f"}.Name()
//	// name goes into an x509.Certificate or x509.CertificateRequest template.
//
// # Requesting a certificate
//
// A workload makes a key and a request with [CreateCSR]; for kube-apiserver
// client certificates it wraps it in a CertificateSigningRequest for the
// kubernetes.io/kube-apiserver-client signer with
// kubeapi.NewCertificateSigningRequest and creates that with its client:
//
//	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
//	der, err := x509sa.CreateCSR(nil, key, x509sa.CSROptions{
//		Subject: x509sa.Subject{ServiceAccount: sa},
//		Usage:   x509sa.ClientAuth,
//	})
//	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Lifetime: time.Hour})
//	// clientset.CertificatesV1().CertificateSigningRequests().Create(ctx, obj, ...)
//
// Serving certificates list their hosts (split by [SplitHosts] into DNS and
// IP SANs) and need a signer of your own; X509-SVIDs add a SPIFFE ID URI SAN
// ([CSROptions.TrustDomain], [NewSPIFFEID]) and need both usages.
//
// # Approving
//
// kube-apiserver records who created a CertificateSigningRequest but binds
// nothing: the kubernetes.io/kube-apiserver-client signer has no subject
// rules. An approver MUST check that a request asks only for its requester's
// identity before approving it, with [MatchRequester] (the identity) and
// [ResolveUsage] (the usages and the signer name), or on the object with
// kubeapi.CheckCertificateSigningRequest, which runs both:
//
//	csr, err := x509sa.ParseCSR(der)
//	if err == nil {
//		err = x509sa.MatchRequester(csr, requester, x509sa.MatchOptions{})
//	}
//	if err != nil {
//		// deny: errors.Is(err, x509sa.ErrRequesterMismatch), ErrNotAllowed, ...
//	}
//
// # Issuing
//
// A signer (or a test) issues with an [Issuer]: the subject is copied from
// the request's raw bytes (so the UID attribute survives, which Kubernetes'
// own CSR signer drops), only the requested usages are granted, the lifetime
// is bounded, and a refresh time with jitter is computed on the model of
// Kubernetes' pod certificates:
//
//	issuer, err := x509sa.NewIssuer(x509sa.IssuerConfig{CA: caCert, Key: caKey, MaxLifetime: 24 * time.Hour})
//	issued, err := issuer.Issue(x509sa.IssueRequest{CSR: der})
//	// issued.ChainPEM, issued.NotBefore, issued.NotAfter, issued.BeginRefreshAt
//
// # Verifying
//
// A server that trusts the CA verifies presented chains with a [Verifier]
// and gets the identity kube-apiserver would see:
//
//	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: pool, Usage: x509sa.ClientAuth})
//	cert, err := v.Verify(tlsState.PeerCertificates)
//	user := cert.UserInfo() // username, UID, groups, credential-id extra
//
// # Errors and limits
//
// Every rejection matches a sentinel (ErrInvalidSubject, ErrReservedExtension,
// ErrLimit, ErrUntrusted, ...) with errors.Is and names what was wrong in
// its message; two typed errors carry data a caller acts on: a
// *[MismatchError] (the requester field that differs) and a
// *[LifetimeError] (the lifetime and the issuer's bounds). Unsupported keys
// match jwks.ErrUnsupportedKey, refused configurations are a
// *ksa.ConfigError. Inputs are bounded by the Max* constants before any
// work is done; bad input never panics.
package x509sa
