// Package deploy renders and checks ksa's deployment files (deploy/ at the
// repository's root) with Helm used as a library (helm.sh/helm/v3, only in
// this module): the chart deploy/charts/ksa is linted as "helm lint" does
// and rendered as "helm template" does, and the plain manifests under
// deploy/manifests are the chart rendered with the values of [Sets].
//
// "go run ./deploy/render" (in interop/) writes the plain manifests; the
// tests fail when they drift from the chart. The tests also decode every
// rendered object strictly with client-go's scheme, check that values.yaml
// and values.schema.json name the same values, that the signer's RBAC is
// what "ksa podcert rbac" prints, that the ksa command of this checkout
// parses the args of every container the files run, and, on real
// kube-apiservers (1.37 and 1.36), that every rendered object applies
// server-side and every pod template passes the restricted Pod Security
// level with no warning; the paste-in snippet (deploy/snippets) and the
// signer's static pod (deploy/signer) are decoded and admitted the same
// way, README.md's install commands run with helm and kubectl built from
// their modules, and kubeadm's own code runs the signer's kubeadm recipe.
package deploy
