// Package clusterapi hands a service-account issuer's key pair to the
// control-plane nodes of a cluster that Cluster API builds with kubeadm,
// the way Cluster API itself distributes it: as the Secret named
// "<cluster>-sa" in the Cluster's namespace of the management cluster. A
// controller that runs a self-managed issuer for the clusters it creates
// (Azure's provider, CAPZ, documents this Secret for workload identity)
// makes the key, publishes the issuer's documents (package oidc), creates
// this Secret before the cluster's first control-plane machine, and
// rotates. The package builds and reads the Secret; the controller writes
// it with its own client: client-go and controller-runtime stay out of the
// library.
//
// # What Cluster API does with the Secret
//
// The kubeadm control plane (KubeadmControlPlane; the kubeadm bootstrap
// provider for control-plane machines without one) looks the Secret up by
// name in the Cluster's namespace. When it is missing before the control
// plane is initialized, it generates it (an RSA 2048 key unless the
// ClusterConfiguration's encryptionAlgorithm says RSA-3072, RSA-4096,
// ECDSA-P256 or ECDSA-P384); when it exists, it uses it and never changes
// its data. For every control-plane machine created, tls.key is written to
// /etc/kubernetes/pki/sa.key (mode 0600) and tls.crt to
// /etc/kubernetes/pki/sa.pub (mode 0640), owned by root, by the machine's
// bootstrap data (another directory when the ClusterConfiguration's
// certificatesDir says so); worker machines get neither file. kubeadm
// points kube-apiserver's --service-account-signing-key-file at sa.key
// and --service-account-key-file at sa.pub, and kube-controller-manager's
// --service-account-private-key-file at sa.key. The files are written when
// a machine is created: a change to the Secret reaches a cluster only
// through new control-plane machines, a rollout.
//
// A KubeadmControlPlane makes itself the controller owner of a Secret of
// type [SecretType] that it finds, so the Secret is deleted with the
// cluster; a Secret of another type keeps the owners it has.
//
// # Rendering and reading
//
// [NewSecret] renders the Secret exactly as Cluster API renders the one it
// generates (name, type, label, data keys, PEM encodings; tls.crt holds a
// public key, not a certificate), for an RSA or ECDSA private key;
// [NewSecretFromRef] reads the key from a PEM file first. [ReadSecret]
// reads a Secret back, whoever wrote it, into a [KeyPair]: the private
// key, the public keys of tls.crt and the signing key's Kubernetes key ID,
// checked as kubeadm and kube-apiserver will need them and more strictly
// (the public key matches the private key, no private key in tls.crt, the
// key limits of package jwks, sizes bounded).
//
// # Keys in an HSM or KMS
//
// A key that cannot leave its key store cannot be handed out this way,
// and the package refuses it ([ErrKeyNotExportable]). A Secret with tls.crt
// alone does not work: Cluster API refuses to join a control-plane machine
// whose service-account key has no private half, and on the first machine
// kubeadm, finding no sa.key, generates a key pair of its own and
// overwrites sa.pub, so the cluster would sign with a key nobody
// published. Such a key signs through an external signer instead (ksa's
// extsigner, kube-apiserver's --service-account-signing-endpoint), which
// kubeadm does not configure: it always sets the key-file flags, which
// kube-apiserver refuses beside the endpoint.
//
// # Walkthrough for a controller
//
// Generate the cluster's key and publish its issuer documents (an RSA key:
// Microsoft Entra ID accepts RS256 tokens only):
//
//	key, err := rsa.GenerateKey(rand.Reader, 2048)
//	if err != nil {
//		return err
//	}
//	pub, err := jwks.NewKey(key.Public())
//	if err != nil {
//		return err
//	}
//	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: issuer + "/openid/v1/jwks"}, []jwks.Key{pub})
//	if err != nil {
//		return err
//	}
//	// Upload docs.Discovery and docs.JWKS where the issuer serves them.
//
// Create the Secret before the cluster's first control-plane machine, and
// set --service-account-issuer to the issuer in the KubeadmControlPlane's
// apiServer extraArgs:
//
//	secret, err := clusterapi.NewSecret("cluster-1", key, clusterapi.SecretOptions{Namespace: "fleet"})
//	if err != nil {
//		return err
//	}
//	_, err = clientset.CoreV1().Secrets("fleet").Create(ctx, secret, metav1.CreateOptions{})
//
// Read it back to learn which key a cluster signs with (pair.KeyID is the
// kid of its tokens, to find in the published key set):
//
//	found, err := clientset.CoreV1().Secrets("fleet").Get(ctx, clusterapi.SecretName("cluster-1"), metav1.GetOptions{})
//	if err != nil {
//		return err
//	}
//	pair, err := clusterapi.ReadSecret(found)
//	if err != nil {
//		return err
//	}
//	fmt.Println(pair.KeyID)
//
// # Rotating
//
// Each control-plane machine keeps the files it was created with, so a new
// key reaches the cluster machine by machine during a rollout of the
// control plane (set the KubeadmControlPlane's spec.rollout.after to now),
// while old and new machines serve side by side. A rotation is therefore
// three updates of the Secret, each followed by a rollout, so that every
// machine accepts the tokens any other signs:
//
//  1. Distribute the next key: the current key still signs, the next one
//     is added to tls.crt (SecretOptions.VerifyKeys) and to the published
//     key set.
//  2. Switch: the next key signs; the previous one stays in tls.crt while
//     in-cluster tokens it signed live (kube-apiserver extends the
//     kubelet's hour-long tokens to a year unless
//     --service-account-extend-token-expiration=false), and in the key set
//     while tokens for other audiences do.
//  3. Retire: the previous key leaves tls.crt and the key set.
//
// Step 2, the Secret updated in place (key is the next key, now signing):
//
//	found, err := clientset.CoreV1().Secrets("fleet").Get(ctx, clusterapi.SecretName("cluster-1"), metav1.GetOptions{})
//	if err != nil {
//		return err
//	}
//	next, err := clusterapi.NewSecret("cluster-1", key, clusterapi.SecretOptions{
//		Namespace:  "fleet",
//		VerifyKeys: []crypto.PublicKey{previousSigner.Public()},
//	})
//	if err != nil {
//		return err
//	}
//	found.Data = next.Data
//	_, err = clientset.CoreV1().Secrets("fleet").Update(ctx, found, metav1.UpdateOptions{})
package clusterapi
