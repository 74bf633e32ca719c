// Package credprovider_test proves `ksa credential-provider run` and the
// configuration `ksa credential-provider config` writes against the
// kubelet's own credential provider code: Kubernetes'
// pkg/credentialprovider/plugin (v1.37.2) reads the configuration, requests
// each pod's token (from a minter standing in for kube-apiserver's
// TokenRequest, bound to the pod, for the configured audience), execs the
// built ksa binary exactly as the kubelet does, decodes its answers and
// caches them: pass-through per token, exchange per service account, and
// never one service account's credential for another's pod.
//
// TestDistributionTrustsServiceAccountTokens closes the loop at the
// registry: CNCF distribution v3, run in this process from its module with
// token auth, trusts a credprovider/registrytoken service; an image pushed
// by a builder service account is pulled with the credential the kubelet's
// plugin code gets from the built ksa (pass-through) for the pod of the
// service account the rules allow, and refused for another's (403 at the
// token service), for a push with a pull-only grant (401 at the registry),
// for a token signed by another key and for a pod token of another
// audience.
package credprovider_test
