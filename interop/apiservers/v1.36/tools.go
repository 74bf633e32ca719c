//go:build tools

// Package apiserver pins kube-apiserver v1.36, which
// .ci/install-controlplane.sh builds from this module into the interop
// module's bin/ directory. The build tag keeps the package out of every
// build; go mod tidy, which considers all tags, reads it all the same.
package apiserver

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
