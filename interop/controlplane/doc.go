// Package controlplane runs a real etcd and kube-apiserver on loopback for
// tests that must hold against Kubernetes itself: TokenRequest, TokenReview,
// the service-account issuer's discovery document and key set, X.509 client
// certificates, admission webhooks.
//
// # Releases
//
// The tests run on two kube-apiserver releases, [Versions]: v1.37.2, the
// release of k8s.io/kubernetes the interop module requires, and v1.36.3,
// built from the small module in interop/apiservers/v1.36 (one Go module
// holds one release of k8s.io/kubernetes). [Config.Version] picks one;
// [Shared.Each] and [EachVersion] run a test once on each, in subtests
// named after them ("v1.37.2", "v1.36.3"). [ControlPlane.Version] is what
// the running kube-apiserver reports on /version, for tests to branch on
// where the releases legitimately differ (each such branch says why).
//
// # Binaries
//
// [Start] looks for etcd in this order:
//
//   - $KSA_ETCD, when set (and then nowhere else);
//   - bin/ of the interop module;
//   - $KUBEBUILDER_ASSETS, where controller-runtime's envtest keeps its
//     binaries;
//   - $PATH.
//
// and for the kube-apiserver of a release, such as v1.37.2, it takes the
// first binary that reports that release (kube-apiserver --version) among:
//
//   - $KSA_KUBE_APISERVER_1_37 (the variable [EnvKubeAPIServerFor] names:
//     one per minor release), when set, and then nowhere else;
//   - $KSA_KUBE_APISERVER, when set, and then nowhere else: one binary of
//     any release, which serves the tests of its release while the others
//     skip;
//   - bin/kube-apiserver-1.37 of the interop module, where
//     .ci/install-controlplane.sh builds it;
//   - kube-apiserver in $KUBEBUILDER_ASSETS;
//   - kube-apiserver on $PATH.
//
// .ci/install-controlplane.sh installs etcd (Debian's etcd-server) and
// builds both kube-apiservers into bin/, and prints KSA_ETCD=...,
// KSA_KUBE_APISERVER_1_37=... and KSA_KUBE_APISERVER_1_36=... lines.
//
// A missing binary is reported as an error matching [ErrBinaryMissing] that
// names the binary (and release), where it was looked for, what was found
// there, and the command that provides it. [StartForTest], [Shared.Get],
// [Shared.Each] and [BinariesForTest] then skip the test, or fail it when
// $CI or $KSA_REQUIRE_CONTROLPLANE is set (see [Required]), so CI never
// passes by skipping: a release whose binary is missing fails there too.
//
// # Test output
//
// A test that gets a control plane logs the release it runs on
// ("controlplane: using kube-apiserver v1.37.2"), and one that skips says so
// in its first line ("controlplane: skipped (etcd, kube-apiserver v1.37.2
// not found); install them with .ci/install-controlplane.sh"). The test
// runner of README.md's test command, interop/ci/gotest, counts these lines
// and ends its report with how many control-plane tests ran on which
// release, or how many skipped and why: plain go test hides both.
//
// # What runs
//
// etcd listens on two free loopback ports with its data in a temporary
// directory on /dev/shm (in memory: etcd 3.4 fsyncs every write, which on a
// disk makes the start several times slower), or in $TMPDIR without
// /dev/shm. kube-apiserver listens on https://127.0.0.1:PORT with a serving
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
// stay. Only Linux is supported; elsewhere [Start] returns [ErrUnsupported].
//
// # Use
//
// One test, one control plane per release:
//
//	controlplane.EachVersion(t, func(t *testing.T, version string) {
//		cp := controlplane.StartForTest(t, controlplane.Config{Version: version})
//		sa, err := cp.Clientset().CoreV1().ServiceAccounts(cp.Namespace(t)).Create(...)
//	})
//
// One control plane per release for all the tests of a package (about 3
// seconds saved per test), each test in namespaces of its own: see
// [Shared]. Both releases' control planes then run at once, until the
// package's tests end.
//
// A highly available control plane: [ControlPlane.AddAPIServer] starts
// another kube-apiserver on the same etcd, with the same certificates,
// admin token and issuers, signing through its own external signer if
// [APIServerConfig.SigningEndpoint] says so. A cluster changing how it
// signs: [ControlPlane.RestartAPIServer] restarts the control plane's
// kube-apiserver with another signing configuration, etcd's objects
// kept.
package controlplane
