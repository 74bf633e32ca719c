// Package clientgo hands a client-go clientset to the pod-certificate
// controller (package podcertctl), for a program that holds one already:
// an operator's manager, a test with client-go's fake clientset.
//
//	cs, err := kubernetes.NewForConfig(restConfig) // or fake.NewClientset(objects...)
//	if err != nil {
//		return err
//	}
//	client, err := clientgo.New(cs)
//	if err != nil {
//		return err
//	}
//	ctl, err := podcertctl.New(podcertctl.Config{Client: client, Signer: podSigner})
//
// It is a package of its own because client-go's kubernetes package
// registers every API group of Kubernetes: a program that has no
// clientset gives the controller podcertctl.NewRESTClient instead, which
// links certificates.k8s.io alone (the ksa command does, and is half the
// size for it).
//
// A fake clientset (k8s.io/client-go/kubernetes/fake) cannot stream an
// informer's initial list; its IsWatchListSemanticsUnSupported says so,
// and [Client] passes that on, so the controller's informer lists
// instead.
package clientgo
