// Package credprovcmd is "ksa credential-provider": the kubelet's image
// credential provider (run) over package credprovider, and the kubelet's
// config and node RBAC for it (config).
package credprovcmd
