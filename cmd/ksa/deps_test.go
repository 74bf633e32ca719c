package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// apiGroups are the Kubernetes API packages ksa links: the ones its
// commands read or write (pod certificates, trust bundles, RBAC
// manifests, GMSA admission reviews, the webhook's authorization checks,
// token reviews).
var apiGroups = []string{
	"k8s.io/api/admission/v1",
	"k8s.io/api/authentication/v1",
	"k8s.io/api/authorization/v1",
	"k8s.io/api/certificates/v1",
	"k8s.io/api/certificates/v1beta1",
	"k8s.io/api/coordination/v1",
	"k8s.io/api/core/v1",
	"k8s.io/api/rbac/v1",
}

// unwanted are packages that pull in much more than a command uses:
// client-go's clientset, scheme and informers register every API group
// (they made the binary twice as large), and server-side apply brings the
// OpenAPI models.
var unwanted = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/util/apply",
	"github.com/google/gnostic-models",
}

// TestLinksOnlyWhatItUses lists the command's dependencies with the go
// command: the API groups must be those of apiGroups, and no package of
// unwanted may appear. A command needing another group adds it here.
func TestLinksOnlyWhatItUses(t *testing.T) {
	var groups, bad []string
	for _, pkg := range linkedPackages(t, buildConfig{}) {
		if strings.HasPrefix(pkg, "k8s.io/api/") {
			groups = append(groups, pkg)
		}
		for _, u := range unwanted {
			if pkg == u || strings.HasPrefix(pkg, u+"/") {
				bad = append(bad, pkg)
			}
		}
	}
	slices.Sort(groups)
	assert.Equal(t, apiGroups, groups, "Kubernetes API packages linked into ksa")
	assert.Empty(t, bad, "packages that link far more than ksa uses")
}
