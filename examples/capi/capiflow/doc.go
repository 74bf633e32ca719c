// Package capiflow is the work of the example program examples/capi: what
// a Cluster API controller running a self-managed issuer does for one
// cluster, with ksa's library only. It is a package rather than the
// program's main so that a test can run the same code against a real
// kube-apiserver, a real key store and a real blob store (interop/capiexample
// does, with SoftHSM2 and Azurite); it uses the library's exported API and
// nothing under internal/.
//
// # The choice: where the keys live decides how they reach the cluster
//
// Cluster API's kubeadm providers hand a cluster its service-account key
// pair through the "<cluster>-sa" Secret of the management cluster, and copy
// its tls.key, the private key, to every control-plane machine. A key that
// can leave its key store (one the controller makes in memory) takes that
// road. A key in an HSM or a KMS never yields its private half:
// clusterapi.NewSecret refuses it with clusterapi.ErrKeyNotExportable, and
// a Secret without tls.key would not work (kubeadm would make a key of its
// own on the first machine, one nobody published). Such a key signs
// through external signers instead (ksa signer serve, package extsigner,
// kube-apiserver's --service-account-signing-endpoint), which follow a ring
// file: the key references and their times.
//
// The flow does not ask which road to take: it makes the key where
// Config.Keys says (a key store, or memory when nil), renders the Secret
// with clusterapi.NewSecret, and takes the refusal as the answer. So:
//
//   - Config.Keys nil: the key is made in memory, published, and written
//     to the API server as the <cluster>-sa Secret, then read back with
//     clusterapi.ReadSecret. Its rotation is three updates of that Secret,
//     each followed by a rollout of the control plane (package clusterapi
//     documents them); this example rolls out no control plane, so it does
//     not rotate such a key.
//   - Config.Keys a key store (SoftHSM2 in the proof; any keystore.Ref
//     scheme works the same): the key is created there through
//     keystore.Creator, published, the Secret refused, and the ring file
//     written to a ConfigMap of the management cluster ([RingName]), the
//     record the cluster's signers follow. Each later run is one step of a
//     scheduled rotation (publish.Rotation over a [ConfigMapRing], its next
//     key created in the same key store by Config.NewKeyRef's reference).
//
// What the example leaves to the deployment, in the signer case: kubeadm
// does not configure --service-account-signing-endpoint (it always sets the
// key-file flags, which kube-apiserver refuses beside the endpoint), so such
// a cluster needs a control plane set up for an external signer; and the
// ring file's references must open where the signers run (a network HSM or
// a KMS the control-plane machines reach, the same module path and PIN file
// there), the ring file itself copied to them. The example writes the
// record; it does not run the signers.
//
// # One run
//
// [Flow.Reconcile] is one reconcile of the cluster: the first sets it up
// ([Flow.Setup]: key, publication and check, distribution); later ones find
// the ring ConfigMap and move the rotation one step ([Flow.Rotate]), or find
// the Secret and read it back ([Flow.Read]). Every run ends with a token
// minted with the key the run is about (the next key, once a step has
// published it) and verified as a relying party does, through the
// published discovery document and key set ([Flow.Verify]).
//
//	hsm, err := pkcs11.NewStore(pkcs11.Config{})
//	if err != nil {
//		return err
//	}
//	defer hsm.Close()
//	newKeyRef, err := capiflow.PKCS11KeyRef("/usr/lib/softhsm/libsofthsm2.so", "ksa", "/run/secrets/pin")
//	if err != nil {
//		return err
//	}
//	flow, err := capiflow.New(capiflow.Config{
//		Cluster:   "cluster-1",
//		Namespace: "fleet",
//		Kube:      kubernetes.NewForConfigOrDie(restConfig).CoreV1(),
//		Store:     store, // publish.Open of https://ACCOUNT.blob.core.windows.net/oidc/cluster-1
//		Keys:      hsm,   // nil: keys made in memory, handed over in the <cluster>-sa Secret
//		NewKeyRef: newKeyRef,
//	})
//	if err != nil {
//		return err
//	}
//	res, err := flow.Reconcile(ctx)
//
// Errors say the step that failed and wrap the library's error
// (publish.ErrChanged when another writer moved the ring file or the
// store, clusterapi's, keystore's); a configuration refused is a
// *ksa.ConfigError.
package capiflow
