// Package kubeapi connects ksa to the Kubernetes API types (k8s.io/api and
// apimachinery), so that the core packages (ksa, jwks, tokens, oidc) build
// with the standard library alone. Import it where your code already holds
// API objects: a controller, an admission webhook, a kubelet-like client.
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
package kubeapi
