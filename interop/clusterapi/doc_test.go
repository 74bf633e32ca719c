// Package clusterapi_test proves package github.com/ksa-go/ksa/clusterapi
// against Cluster API's own code (sigs.k8s.io/cluster-api/util/secret):
// the Secret ksa renders is the Secret Cluster API generates for the same
// key, byte for byte, and each reads the other's; Cluster API's look-up
// keeps a Secret ksa rendered (no key generated in its place) and writes
// its keys to the files kubeadm reads, and refuses, as ksa does, a Secret
// without the private key. On a real kube-apiserver, the Secret is created
// with client-go and found by Cluster API's look-up through a
// controller-runtime client, and the reverse.
package clusterapi_test
