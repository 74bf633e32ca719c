// Package kubeapi connects ksa to the Kubernetes API types (k8s.io/api and
// apimachinery), so that the core packages (ksa, jwks, tokens, oidc,
// tokenreview, x509sa, podcert) build with the standard library alone: it
// is the module's one home for conversions to and from API objects. Import
// it where your code already holds API objects: a controller, an admission
// webhook, a signer, a kubelet-like client.
//
// # Requesting tokens
//
// [RequestFromSpec] turns an authentication/v1 TokenRequestSpec into a
// tokens.Request, resolving the bound object as kube-apiserver does. A
// [Manager] caches tokens obtained through the TokenRequest API exactly as
// the kubelet's token manager does (refresh at 80% of the lifetime or after
// 24 hours, with jitter; a failed refresh keeps serving the cached token
// until it expires):
//
//	m, err := kubeapi.NewManager(kubeapi.ManagerConfig{
//		Requester: kubeapi.RequesterFunc(func(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
//			return clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
//		}),
//	})
//	tr, err := m.Token(ctx, "prod", "billing", &authenticationv1.TokenRequest{
//		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}},
//	})
//
// # Checking live objects
//
// A tokens.Validator with an object getter refuses tokens whose pod,
// secret, node or service account is gone. [ObjectGetter] adapts a function
// returning API objects (a client-go Get, a lister, a controller-runtime
// cache) and maps Kubernetes' NotFound status to tokens.ErrObjectNotFound;
// [NotFound] does the mapping alone.
//
// # Legacy token secrets
//
// [IsServiceAccountTokenSecret] decides, as Kubernetes does, whether a Secret
// holds a legacy token of a service account; [LegacySecret] converts one
// for tokens.LegacySecretGetter.
//
// # Reviewing tokens
//
// [TokenReview] builds the authentication/v1 TokenReview for a
// tokenreview.Request and [ReviewStatus] reads its answer back.
//
// # Certificate signing requests
//
// [NewCertificateSigningRequest] wraps a request from x509sa.CreateCSR in a
// certificates.k8s.io/v1 CertificateSigningRequest;
// [CheckCertificateSigningRequest] is an approver's whole check of one
// (x509sa.ResolveUsage and x509sa.MatchRequester against the requester the
// object records, [CSRRequester]); [IssueRequestFromCSR] reads what an
// x509sa.Issuer needs from an approved one. [KeyUsages] and
// [UsageFromKeyUsages] convert spec.usages:
//
//	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Lifetime: time.Hour})
//	// an approver:
//	csr, err := kubeapi.CheckCertificateSigningRequest(obj, x509sa.MatchOptions{})
//
// # Pod certificates
//
// [PodCertRequest] and [PodCertRequestV1beta1] read a PodCertificateRequest
// of either version as a podcert.Request and podcert.Status;
// [ApplyPodCertDecision] and [ApplyPodCertDecisionV1beta1] set a
// podcert.Decision's status on the object, after podcert.CheckStatus
// accepts the update; [PodCertStatus] and [PodCertStatusV1beta1] convert a
// status alone.
package kubeapi
