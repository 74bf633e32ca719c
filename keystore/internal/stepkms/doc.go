// Package stepkms is what the key-store packages under keystore/ share
// over step-ca's go.step.sm/crypto: the flow of Open and Create (the
// reference parsed and checked before the store is asked, the key checked
// with jwks' rules and a probe signature after), the errors in an
// operator's words (keystore.StoreError), the signer of a remote key (the
// caller's context honoured, the calls in flight bounded) and the clients
// of remote stores, one per configuration. Each store's package holds only
// what is its own: its client, its names and its store's errors.
package stepkms
