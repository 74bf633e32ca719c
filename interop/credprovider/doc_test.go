// Package credprovider_test proves `ksa credential-provider run` and the
// configuration `ksa credential-provider config` writes against the
// kubelet's own credential provider code: Kubernetes'
// pkg/credentialprovider/plugin (v1.37.2) reads the configuration, requests
// each pod's token (from a minter standing in for kube-apiserver's
// TokenRequest, bound to the pod, for the configured audience), execs the
// built ksa binary exactly as the kubelet does, decodes its answers and
// caches them: pass-through per token, exchange per service account, and
// never one service account's credential for another's pod.
package credprovider_test
