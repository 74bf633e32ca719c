//go:build tools

// Package ci pins the Kubernetes commands (and Helm) that the interop
// tests run as real processes, so that "go mod tidy" keeps their packages in go.sum and
// .ci/install-controlplane.sh (kube-apiserver) and .ci/install-node.sh
// (kubelet) can build them from this module.
//
// The build tag keeps the package out of every build, vet and test run
// (./... skips it): it is never compiled, since a program cannot be
// imported; go mod tidy, which considers all tags, reads it all the same.
package ci

import (
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
