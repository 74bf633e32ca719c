// Package controlplane runs a real etcd and kube-apiserver on loopback for
// tests that must hold against Kubernetes itself: TokenRequest, TokenReview,
// the service-account issuer's discovery document and key set, X.509 client
// certificates, admission webhooks.
//
// # Binaries
//
// [Start] looks for each binary in this order:
//
//   - $KSA_ETCD or $KSA_KUBE_APISERVER, when set (and then nowhere else);
//   - bin/ of the interop module, where .ci/install-controlplane.sh builds
//     kube-apiserver;
//   - $KUBEBUILDER_ASSETS, where controller-runtime's envtest keeps both;
//   - $PATH.
//
// A missing binary is reported as an error matching [ErrBinaryMissing] that
// names the binary, where it was looked for, and the command that provides
// it. [StartForTest] and [Shared.Get] then skip the test, or fail it when
// $CI or $KSA_REQUIRE_CONTROLPLANE is set (see [Required]), so CI never passes
// by skipping.
//
// # What runs
//
// etcd listens on two free loopback ports with its data in a temporary
// directory on /dev/shm (in memory: etcd 3.4 fsyncs every write, which on a
// disk makes the start several times slower), or in $TMPDIR without /dev/shm. kube-apiserver listens on https://127.0.0.1:PORT with a serving
// certificate from the control plane's own CA ([ControlPlane.CACert]), and
// runs with:
//
//   - --token-auth-file holding [ControlPlane.AdminToken], for [AdminUser] in
//     group system:masters; [ControlPlane.RESTConfig] and
//     [ControlPlane.Clientset] use it;
//   - --authorization-mode=Node,RBAC unless [Config.AuthorizationModes] says otherwise;
//   - --service-account-issuer, --api-audiences,
//     --service-account-signing-key-file and --service-account-key-file from
//     [Config] (a new RSA key by default), so tests can mint or verify
//     tokens with the same keys; or, with [Config.SigningEndpoint],
//     --service-account-signing-endpoint and no key file: an external
//     signer the test runs signs and supplies the keys;
//   - --client-ca-file trusting the control plane's CA ([ControlPlane.ClientCert])
//     and [Config.ClientCAs].
//
// No kube-controller-manager, scheduler or kubelet runs: objects are stored
// and admitted but nothing acts on them. Pods are accepted (and can bind
// tokens) but never run; deleted namespaces stay Terminating; no
// ServiceAccount "default" appears by itself ([ControlPlane.Namespace] makes
// one).
//
// # Lifetime
//
// [ControlPlane.Stop] kills both processes (each with its process group),
// waits for them, and removes the temporary directory. The processes are
// also killed by the kernel when the test binary dies (Pdeathsig), so a
// panic or a timeout leaves no process behind, though then the directories
// ksa-controlplane-* (in $TMPDIR) and ksa-controlplane-etcd-* (in /dev/shm)
// stay. Only Linux is
// supported; elsewhere [Start] returns [ErrUnsupported].
//
// # Use
//
// One test, one control plane:
//
//	cp := controlplane.StartForTest(t, controlplane.Config{})
//	sa, err := cp.Clientset().CoreV1().ServiceAccounts(cp.Namespace(t)).Create(...)
//
// One control plane for all the tests of a package (about 3 seconds saved
// per test), each test in namespaces of its own: see [Shared].
package controlplane
