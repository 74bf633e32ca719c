// Package node runs a real Kubernetes node on this machine for tests that
// must hold against a kubelet: containerd with runc, and a kubelet
// v1.37.2 built from the interop module's k8s.io/kubernetes, registered
// with a control plane of package interop/controlplane (kube-apiserver
// v1.37.2: a kubelet may not be newer than its API server). Pods run for
// real: the kubelet writes their projected service-account tokens,
// ClusterTrustBundles and pod certificates, and a test reads what a pod
// saw in its log.
//
// # Binaries
//
// [FindBinaries] looks for containerd (and ctr and containerd-shim-runc-v2
// beside it), runc and a kubelet reporting [Version]: each at its
// variable ($KSA_CONTAINERD, $KSA_RUNC, $KSA_KUBELET_1_37) when set, and
// then nowhere else; else the kubelet at bin/kubelet-1.37 of the interop
// module; else on $PATH. [InstallScript], .ci/install-node.sh, installs
// Debian's containerd and runc packages and builds the kubelet into bin/
// from the module and build cache kube-apiserver is built from, and
// prints KSA_...= lines.
//
// The node's own programs are built by [Start], each time, with go build
// (cached) from interop/node/cmd: "pause", the pod sandbox's program;
// "probe", the tests' workload; "loopback-cni", the network plugin
// ("spiffe-mtls", a go-spiffe app, is built by the test that runs it). Their
// images are made in memory by package interop/node/image and imported
// with ctr: nothing is pulled from a registry, and none is reachable.
//
// A missing program is an error matching [ErrBinaryMissing];
// [BinariesForTest], [StartForTest] and [Shared.Get] then skip the test
// with the line "node: skipped (containerd, runc, kubelet v1.37.2 not
// found); install them with .ci/install-node.sh", which the test runner
// interop/ci/gotest counts and reports in its node line, or fail it when
// $CI or $KSA_REQUIRE_CONTROLPLANE is set (controlplane.Required), so CI
// never passes by skipping. A test that runs a node logs "node: using
// kubelet v1.37.2".
//
// # What runs
//
// Everything lives in a temporary directory, ksa-node-* in $TMPDIR
// ([Files]), and nowhere else:
//
//   - containerd with its own root, state, socket and configuration
//     (version 2): the CRI plugin runs runc with cgroupfs
//     (SystemdCgroup = false) and restrict_oom_score_adj = true (root here
//     lacks CAP_SYS_RESOURCE, and without it every sandbox fails with
//     "can't get final child's PID from pipe"); sandbox_image is
//     [SandboxImage]; network namespaces are kept under the state
//     directory, not /run/netns; CNI plugins and configuration come from
//     directories of the node's own.
//   - the network: a pod gets a network namespace of its own holding only
//     loopback. The plugin loopback-cni brings lo up and gives it the
//     alternative name eth0 (containerd takes the pod's address from an
//     eth0 in the plugin's result): the pod's address is 127.0.0.1, its
//     eth0 is its lo, no device or route is added on the host. It is
//     installed as "loopback" too, the plugin containerd runs for every
//     pod's lo.
//   - the kubelet, with a client certificate for system:node:NAME in
//     system:nodes signed by the control plane's CA (the control plane
//     authorizes nodes with the Node authorizer, and [ControlPlaneConfig]
//     adds the admission plugin NodeRestriction); cgroupfs on cgroup v1
//     (failCgroupV1: false: these machines have hybrid cgroups) under a
//     cgroup root of its own, /ksa-node-*, made in every hierarchy; its
//     API on 127.0.0.1 with client certificates and webhook authorization;
//     --node-ip a non-loopback address of the machine (the kubelet refuses
//     a loopback one; the address is only recorded); a static pod
//     directory ([Files.StaticPods]); no eviction, no image garbage
//     collection, no iptables chains.
//
// [Start] returns once the Node is Ready, a few seconds after it begins
// (the first time, go build adds its own). No scheduler or
// kube-controller-manager runs: [Node.RunPod] binds pods with
// spec.nodeName, [Node.PrepareNamespace] makes the ServiceAccount
// "default" and the ConfigMap kube-root-ca.crt that the controllers would
// make, and the not-ready taint the node got as it registered stays (the
// kubelet admits pods despite NoSchedule taints).
//
// # Pods
//
// [ProbePod] is a pod of [ProbeImage], which prints the files it is given,
// one JSON line each, and waits to be deleted; [Node.ProbeFiles] reads
// those lines from the container's log ([Node.Logs]: the kubelet's log
// files, since the API server would reach the kubelet at the node's
// address). Tests add the volumes they probe:
//
//	pod := node.ProbePod("token", "/var/run/ksa/token")
//	pod.Spec.Volumes = ... // a projected serviceAccountToken at /var/run/ksa
//	running, err := n.RunPod(ctx, ns, pod)
//	files, err := n.ProbeFiles(ctx, running)
//	token := files["/var/run/ksa/token"].Data
//
// Other images are built with package interop/node/image and imported
// with [Config.Images] or [Node.ImportImage]; an archive on disk (the ksa
// command's image, which package interop/ksaimage builds and
// `go run ./ci/image` writes) with [Node.ImportArchive], as
// `ctr -n k8s.io images import` does, and [Node.ImageDigest] says what
// containerd holds. A pod whose containers exit runs with
// [Node.RunPodToCompletion].
//
// # Static pods and a restarted API server
//
// A manifest written in [Files.StaticPods] runs as a static pod, without
// the API server: the kubelet starts it and reports it as a mirror pod.
// TestSignerStaticPod runs `ksa signer serve` so (its manifest is
// deploy/signer/ksa-signer.yaml, the one users install) and then restarts kube-apiserver with
// --service-account-signing-endpoint at its socket; the kubelet, told by
// [Config.APIServer] to reach kube-apiserver through a proxy, follows it
// to its new port.
//
// # The chart on the node
//
// The chart deploy/charts/ksa, rendered by package interop/deploy with
// the ksa image (pull policy Never) and applied server-side, runs on the
// node as a cluster without kube-controller-manager and kube-proxy lets
// it: a test makes the Deployment's pods from its template, and, since a
// pod's own network holds only loopback, runs them on the host's
// network (hostNetwork), reaching kube-apiserver at 127.0.0.1
// (KUBERNETES_SERVICE_HOST and _PORT set in the container), each with a
// port of its own.
//
// TestChartPodcert: `ksa podcert serve`, its CA in the Secret NOTES.txt
// names, two replicas Ready (--leader-elect-identity the pod's name: on
// the host's network the host name is the node's); a pod with a
// podCertificate projection of the chart's signer starts with the
// certificate of its kubelet's PodCertificateRequest, chained to the CA;
// a pod asking for a serving host podcert.allowHosts does not admit is
// Denied and never starts; two pods of deploy/snippets/spiffe-sidecar.yaml
// (`ksa spiffe serve` as a native sidecar) do mutual TLS with go-spiffe,
// an app of cmd/spiffe-mtls, with no failed handshake, through a CA
// rotation (--next-ca-* in the chart's extraArgs: the server's
// certificate from the current CA, the client's from the next); the
// holder of the Lease deleted, the other replica takes the Lease and
// keeps issuing, and the ClusterTrustBundle holds both CAs at each step.
//
// TestChartGMSAWebhook: `ksa webhook serve`, its serving certificate from
// a kubernetes.io/tls Secret and webhook.tls.caBundle (no cert-manager);
// its webhook configurations are applied with clientConfig.url
// https://127.0.0.1:PORT in place of the Service, which leads nowhere
// without kube-proxy. kube-apiserver admits a pod of a service account
// the chart's webhook.allow lets use a credential spec, inlining it, and
// the webhook denies one it does not.
//
// # Teardown
//
// [Node.Stop] leaves the machine as it was: it deletes the node's pods and
// waits for the kubelet to finish them, stops the kubelet, removes what
// sandboxes remain through containerd's CRI (their network namespaces
// with them), stops containerd, kills any process left in the node's
// cgroups or running from its directory (a shim), unmounts everything
// under its directory, removes its cgroups, deletes the Node object, puts
// back the kernel tunables the kubelet changed as it started
// (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops and the
// keyring limits), and removes the directory. [Node.Leftovers] lists what
// is left, and [StartForTest] and [Shared.Run] fail when anything is.
// The kubelet and containerd are killed by the kernel when the test binary
// dies (as controlplane's processes are), but what they started then
// stays: run [Node.Stop].
//
// Nodes may run side by side (each has its directory, cgroup root and
// ports), on one control plane or several; the kernel tunables are then
// put back by the node that found them unchanged, when it stops.
//
// Only Linux is supported, as root; elsewhere [Start] returns
// [ErrUnsupported].
//
// # Use
//
// One node for the tests of a package, on a control plane of its own:
//
//	var cluster node.Shared
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m, controlplane.Config{}, node.Config{})) }
//
//	func TestPod(t *testing.T) {
//		n := cluster.Get(t)
//		ns := n.Namespace(t)
//		...
//	}
//
// A node of its own, on a control plane the test has ([ControlPlaneConfig]
// makes its configuration fit): [StartForTest].
package node
