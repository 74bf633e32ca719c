// Package pemblock reads the PEM blocks of key files strictly, for jwks
// (public keys, as kube-apiserver's --service-account-key-file) and
// keystore (private signing keys): a damaged block is reported rather
// than passed over, the block types of keys and certificates are named
// once, and private key DER is parsed in the three forms Kubernetes
// writes. It holds no state and imports only the standard library.
package pemblock
