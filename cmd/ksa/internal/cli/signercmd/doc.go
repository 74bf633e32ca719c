// Package signercmd is "ksa signer serve": the external JWT signer of
// kube-apiserver, over the library's extsigner, from key files or a ring
// file it follows.
package signercmd
