// Package ksa is the identity vocabulary of the ksa module, a Go SDK for
// Kubernetes workload identity: service-account tokens, their keys and
// discovery, service-account identity in X.509 certificates, Windows GMSA
// credential specs, and cloud credentials from projected tokens.
//
// # Who
//
// Every package speaks of the same identity. A [ServiceAccount] is a
// namespace, a name and a UID; its username is
// system:serviceaccount:<namespace>:<name> ([ServiceAccount.Username],
// [ParseUsername] with Kubernetes' name rules) and its groups are
// system:serviceaccounts and system:serviceaccounts:<namespace>
// ([ServiceAccount.Groups]). An [Identity] adds what a credential proves
// beyond the account (the pod and node it was issued to, its credential
// ID), and [Identity.UserInfo] derives the user kube-apiserver
// authenticates, extras included.
//
//	sa, err := ksa.ParseUsername("system:serviceaccount:prod:billing")
//	fmt.Println(sa.Groups()) // [system:serviceaccounts system:serviceaccounts:prod]
//
// # The packages
//
// The core imports the standard library alone:
//
//   - ksa (this package): service accounts, identities and the user
//     kube-apiserver authenticates, Kubernetes' name rules.
//   - jwks: key IDs as Kubernetes derives them, JWK and JWKS built from
//     public keys only, an audit for any JWKS, strict parsing, public keys
//     from PEM, and key sources: static, or remote (cached, rate-limited).
//   - keystore: signing keys by reference: a PEM key file, or a key in an
//     HSM or KMS named by a pkcs11:, awskms:, cloudkms: or azurekms: URI,
//     checked before any store is asked and never shown with a secret; the
//     Opener (and Creator) seam a program opens and creates them through,
//     and Openers, which gives each reference to the store of its scheme;
//     PEM key files as kube-apiserver reads them, checked with jwks' key
//     rules.
//   - keystore/keystoretest: a SoftHSM2 token and a local-kms (AWS KMS) of
//     a test's own, and the conformance checks every key store passes.
//   - tokens: minting bound service-account tokens byte-identical to
//     kube-apiserver's, validating them as it does (stricter where it is
//     lenient) with an optional result cache, and the projected-token file
//     source a pod reads.
//   - oidc: the issuer's discovery document and JWKS (an http.Handler, or
//     files for blob hosting) and the relying party: discovery and a
//     verifier for one or several issuers.
//   - oidc/oidctest: a test issuer on loopback.
//   - admissionauth: an admission webhook's check of its caller's token
//     (Kubernetes 1.37, alpha): bound to the webhook's configuration, for
//     its URL, attested for the review's API group; an http.Handler
//     middleware, required or merely accepted.
//   - tokenreview: validation by kube-apiserver's TokenReview API, after
//     local validation or instead of it.
//   - x509sa: service-account and pod identity in certificate subjects:
//     encoding, strict decoding, CSRs and their approval, issuing, chain
//     verification, SPIFFE IDs.
//   - podcert: the PodCertificateRequest signer's checks and decision, the
//     API's status rules, and the workload side: TLS credentials and trust
//     bundles from files (the mounted pod certificate and
//     clusterTrustBundle projection, any key and certificate pair), mTLS
//     peers, a self-signed serving certificate.
//   - podcert/podcerttest: a test signer (with CA rotation) and the
//     kubelet's atomic writes of credential and trust bundles.
//   - extsigner: kube-apiserver's external JWT signer over any
//     crypto.Signer: the key ring, with rotation and every answer checked,
//     and its socket.
//   - rotation: the one model of a key's (or CA's) rotation: a schedule
//     of publication, signing and retirement times checked against every
//     rule that keeps tokens verifiable, what it publishes at an instant,
//     the safe replacement of a running schedule, and the next step of a
//     rotation given what its copies publish.
//   - publish: an issuer where relying parties read it: object stores
//     (a directory here, each cloud a leaf below) written conditionally,
//     the documents in the safe order, the check as Entra ID, AWS and
//     Google fetch an issuer, and the scheduled rotation of a ring file's
//     keys, one step per run.
//   - publish/publishtest: an in-memory store and ring file for tests.
//   - federation/register: what registers an issuer's service accounts
//     with a cloud's workload identity federation (Entra ID federated
//     credentials, an AWS IAM OIDC provider and trust policy, a Google
//     workload identity pool): the CLI commands and the requests they
//     send, the clouds' limits checked.
//   - credprovider: the kubelet's image credential provider protocol: the
//     request read strictly, answers whose cache never outlives the
//     credential or the pod's token, a plugin's main loop, and the
//     offline check of the token the kubelet sends.
//   - credprovider/tokenexchange: the pod's token exchanged for a
//     registry's at an OAuth 2.0 token endpoint (RFC 8693), as a
//     credential provider.
//   - credprovider/providerconfig: the kubelet's CredentialProviderConfig
//     entry for such a plugin, the nodes' RBAC for its token audience,
//     and a linter of the known mistakes.
//   - credprovider/registrytoken: a Docker registry token endpoint that
//     verifies the pod's token and grants repositories by namespace and
//     service account, so a plain registry trusts workload identity.
//
// Each integration is a leaf package importing what it adapts:
//
//   - kubeapi (k8s.io/api): every conversion to and from Kubernetes' API
//     objects: TokenRequest specs, the kubelet's token manager (a
//     TokenRequest cache), live-object getters, the legacy Secret check,
//     TokenReview, CertificateSigningRequests (making, approving, issuing)
//     and PodCertificateRequests (reading, applying a decision).
//   - clusterapi (k8s.io/api): a cluster's service-account key pair as
//     Cluster API distributes it to control-plane nodes, the "<cluster>-sa"
//     Secret: rendered as Cluster API renders it, read back and checked.
//   - credspec (k8s.io/api): Windows GMSA credential specs: types and CRD,
//     the effective spec per container, the admission webhook.
//   - extsigner/grpcserver (gRPC): the external signer's server, API v1
//     and v1alpha1.
//   - podcert/workloadapi (gRPC, go-spiffe's Workload API definitions):
//     the SPIFFE Workload API served from the mounted pod certificate and
//     trust bundles, streaming every rotation, and SPIFFE's filesystem
//     delivery.
//   - extsigner/signertest (gRPC): a conformance harness for any external
//     signer, driven over its socket.
//   - golangjwt (golang-jwt v5): a Keyfunc over any key source with the
//     validator's key rules, and the kubernetes.io claims.
//   - jwxkeys (jwx v3): jwk.Set to and from ksa keys, and a
//     jws.KeyProvider over any key source.
//   - ksaprom (Prometheus): Kubernetes' service-account metrics and ksa's
//     own, from the validation and fetch hooks.
//   - federation (azidentity): an Azure SDK credential that exchanges
//     projected tokens for Entra ID access tokens, checking them first.
//   - federation/entratest: a local Entra ID token endpoint.
//   - publish/azblob (azblob, azidentity): the publish.Store of an Azure
//     Blob container.
//   - publish/s3 (aws-sdk-go-v2): the publish.Store of an S3 bucket.
//   - publish/gcs (cloud.google.com/go/storage): the publish.Store of a
//     Google Cloud Storage bucket.
//   - keystore/pkcs11 (go.step.sm/crypto, crypto11; cgo): keys on PKCS #11
//     tokens (HSMs): one login per token, a second PIN refused.
//   - keystore/awskms (go.step.sm/crypto, aws-sdk-go-v2): keys in AWS KMS.
//   - keystore/cloudkms (go.step.sm/crypto, Google's Cloud KMS client):
//     key versions in Google Cloud KMS.
//   - keystore/azurekms (go.step.sm/crypto, azkeys): keys in Azure Key
//     Vault.
//
// The controllers over client-go are leaf packages too, for a program
// that runs them in a manager of its own:
//
//   - podcert/podcertctl (client-go): the pod-certificate controller: an
//     informer and work queue over a podcert.Signer, certificates.k8s.io
//     v1 or v1beta1, the CA published as a ClusterTrustBundle, the CA
//     rotated on package rotation's schedule, readiness, events, its RBAC
//     as data.
//   - podcert/podcertctl/clientgo (client-go's clientset): a clientset
//     (a fake one in tests) handed to the controller.
//
// And the programs:
//
//   - cmd/ksa (a module of its own): the operator's command. A
//     self-managed issuer: issuer keygen, render, publish, check, rotate
//     and register (azure, aws, gcp), capi-secret (the Cluster API
//     Secret); tokens: token inspect, verify and
//     mint; GMSA: credspec generate and crd, webhook serve (the admission
//     webhook); X.509: x509 inspect and csr; signer serve (the external
//     JWT signer); pod certificates: podcert serve (the signer) and
//     podcert rbac; spiffe serve (the SPIFFE Workload API);
//     credential-provider run (the kubelet's image credential provider)
//     and config; and version.
//   - examples/quickstart: the whole flow on loopback.
//   - examples/gmsa-webhook: the GMSA admission webhook as a program.
//   - examples/capi: a Cluster API controller's issuer for one cluster,
//     one reconcile per run: the key made in memory and handed over as
//     the <cluster>-sa Secret, or made in a key store and given to
//     external signers as a ring file in a ConfigMap, rotated one step
//     per run; the issuer published and checked; tokens verified through
//     it.
//   - examples/capi/capiflow: the program's work as a package, which
//     interop/capiexample runs against SoftHSM2, Azurite and real
//     kube-apiservers.
//
// # The flow
//
// A cluster signs tokens ([tokens.Minter]) with a key whose public half it
// publishes ([jwks.MarshalSet], [oidc.Handler]). Inside the cluster,
// kube-apiserver (or [tokens.Validator] with an object getter) validates them
// against live objects. Outside, a relying party discovers the issuer and
// verifies with cached remote keys ([oidc.Verifier]), getting the same
// result. A pod reads its projected token ([tokens.FileSource]) and trades it
// for cloud credentials ([federation.AzureCredential]; the same source serves
// AWS and Google SDKs).
//
// Run the whole flow on loopback with go run ./examples/quickstart.
package ksa
