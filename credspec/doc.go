// Package credspec handles Windows GMSA credential specs in Kubernetes: the
// windows.k8s.io GMSACredentialSpec resource, the deep-equal of credential
// specs, the effective spec a kubelet gives each container, and the
// admission webhook that inlines and authorizes them (KEP-689), with the
// behaviour, codes and messages of kubernetes-sigs/windows-gmsa.
//
// # The resource
//
// A cluster-scoped GMSACredentialSpec holds a credential spec in its
// credspec field. [CRD] returns the CustomResourceDefinition to install;
// [ResourceYAML] turns the JSON file New-CredentialSpec writes into a
// manifest:
//
//	data, _ := os.ReadFile("webapp01.json")
//	manifest, err := credspec.ResourceYAML("webapp01", data)
//
// [NewCredentialSpec] writes the same credential spec without a
// domain-joined Windows host, from the facts Get-ADDomain prints and the
// gMSA's name (what "ksa credspec generate" does):
//
//	spec, err := credspec.NewCredentialSpec(credspec.CredentialSpecConfig{Account: "WebApp01",
//		DNSName: "contoso.com", NetBIOSName: "CONTOSO", // Get-ADDomain's DNSRoot, NetBIOSName,
//		GUID: "244818ae-87ca-4fcd-92ec-e79e5252348a",     // ObjectGUID
//		SID:  "S-1-5-21-2126729477-2524075714-3094792973"}) // and DomainSID
//	manifest, err := credspec.NewGMSACredentialSpec(spec.DefaultName(), spec).Manifest()
//
// [Decode] and [DecodeAll] read manifests of v1 or v1alpha1 strictly;
// [AddToScheme] registers the types with a runtime.Scheme.
//
// # Pods
//
// A pod names an object in securityContext.windowsOptions at pod level or
// per container (gmsaCredentialSpecName); the webhook inlines the contents
// next to it (gmsaCredentialSpec), and the kubelet hands the runtime the
// effective contents of each container:
//
//	for _, e := range credspec.EffectiveSpecs(pod) {
//		fmt.Println(e.Container, e.From, e.CredentialSpec())
//	}
//
// [EffectiveSpecs] follows Kubernetes' rule, under which the two GMSA fields
// go as a pair; [EffectiveSpecsAlpha] applies the alpha kubelet's rule to the
// 1.14 annotations; [CheckWindowsOptions] is the API server's field
// validation.
//
// # Comparing credential specs
//
// [Equal] is windows-gmsa's comparison: JSON-level, whitespace and key order
// ignored, case- and array-order-sensitive. [Canonical] renders a spec the
// way the webhook inlines it (compact, keys sorted). Both refuse input over
// [MaxSize] (64 KiB, the pod field's limit).
//
// # The webhook
//
// The [Expander] (mutating) and the [Validator] (validating) work on
// corev1.Pod values through two interfaces: a [Source] of object contents
// and an [Authorizer] of the `use` verb. [StaticSource] is an in-memory
// source; [ReviewAuthorizer] sends LocalSubjectAccessReviews through any
// client, windows-gmsa's way. Denials are *[Denial] values carrying the
// admission code (400, 403, 404, 417, 422, 500) and windows-gmsa's message;
// they match sentinels such as [ErrNotAuthorized] with errors.Is and are
// apimachinery APIStatus errors.
//
//	src, err := credspec.NewStaticSource(objects...)
//	authz, err := credspec.NewReviewAuthorizer(credspec.ReviewAuthorizerConfig{
//		Create: func(ctx context.Context, r *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
//			return clientset.AuthorizationV1().LocalSubjectAccessReviews(r.Namespace).Create(ctx, r, metav1.CreateOptions{})
//		},
//	})
//	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src})
//	val, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz})
//	h, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp, Validator: val})
//
// [Handler] serves /mutate, /validate, /health and /info. Serve it over TLS
// with the module's source of TLS credentials from files, podcert.Source,
// so a renewed certificate (a kubernetes.io/tls Secret mounted in a
// volume) is served from the next handshake on, without a restart:
//
//	certs, err := podcert.NewSource(podcert.SourceConfig{KeyPath: "/tls/tls.key", ChainPath: "/tls/tls.crt", AnyCertificate: true})
//	srv := &http.Server{Addr: ":443", Handler: h, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}}
//	err = srv.ListenAndServeTLS("", "")
//
// Register the handler's paths in a MutatingWebhookConfiguration (/mutate,
// pods CREATE, plus pods/ephemeralcontainers UPDATE) and a
// ValidatingWebhookConfiguration (/validate, pods CREATE and UPDATE, plus
// pods/ephemeralcontainers UPDATE), with failurePolicy Fail and sideEffects
// None. The webhook's service account needs get on gmsacredentialspecs and
// create on localsubjectaccessreviews; each workload's service account
// needs use on the objects it names.
//
// To let only a caller holding a token for this webhook through (Kubernetes
// 1.37, alpha: a token bound to the webhook's configuration; see package
// admissionauth), give HandlerConfig one admissionauth.Verifier per path:
// MutateCallers for /mutate, bound to the MutatingWebhookConfiguration and
// for its URL, ValidateCallers likewise. The review is checked against the
// token after it is decoded, without a second parse; a refused caller gets
// an HTTP error (401 or 403), not a review. Off by default: kube-apiserver
// v1.37.2 sends no token of its own.
//
// # Where it differs from windows-gmsa
//
// Init and ephemeral containers are expanded and authorized too (ephemeral
// ones when added through pods/ephemeralcontainers); the requesting user
// can be checked as well ([ValidatorConfig].CheckRequestingUser);
// contents are rendered and compared within [MaxSize]; a missing object is
// recognised by its error type, not by the text "not found"; denials carry
// a status reason; a pod update that removes a level's GMSA settings is
// refused like one that changes them; the AdmissionReview body is bounded
// ([DefaultMaxRequestBytes]) and must be admission.k8s.io/v1 or v1beta1,
// answered in the same version; each review's lookups are bounded by a
// timeout ([DefaultReviewTimeout]); a replaced certificate is noticed at
// the next handshake (podcert.Source compares the files' identity, size
// and time) instead of by watching the files.
package credspec
