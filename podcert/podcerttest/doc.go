// Package podcerttest is a pod-certificate signer and the kubelet's side
// of pod certificates, for tests of programs that use them: a test CA that
// issues pod certificates through a podcert.Signer and rotates (the next
// CA published first, issuing later, the old one retired), and a [Mount]
// that writes credential and trust bundles into a directory the way the
// kubelet writes a projected volume (a new hidden directory, then a
// symbolic link swapped by a rename), so that a program reading the files
// sees every replacement whole, as it would in a pod.
//
//	ca, err := podcerttest.NewSigner(podcerttest.Config{})
//	mount, err := podcerttest.NewMount(t.TempDir())
//	pod := podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"}
//	bundle, err := ca.Issue(pod)
//	err = mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()})
//	// The program under test reads mount.Path("credentialbundle.pem") and
//	// mount.Path("ca.pem"); each Write replaces both at once.
//
//	// A CA rotation without failed handshakes, as a signer runs it:
//	err = ca.StageCA() // the next CA joins the trust bundle...
//	err = mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()})
//	ca.PromoteCA() // ...then issues...
//	bundle, err = ca.Issue(pod)
//	err = mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()})
//	ca.RetireCA() // ...and the old CA goes once its certificates expired.
//	err = mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()})
//
// Keys are ECDSA P-256 unless a Pod names its own. Nothing here is fit for
// production: the CA keys live in memory, unprotected.
package podcerttest
