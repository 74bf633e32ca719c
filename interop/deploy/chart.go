package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ChartDir is the chart's directory, relative to the repository's root.
const ChartDir = "deploy/charts/ksa"

// ManifestsDir holds the plain manifests, relative to the repository's root.
const ManifestsDir = "deploy/manifests"

// Release and Namespace are the release name and namespace the plain
// manifests are rendered with.
const (
	Release   = "ksa"
	Namespace = "ksa-system"
)

// KubeVersion is the Kubernetes release the chart is rendered for when no
// cluster is asked ("helm template --kube-version"): the chart requires
// 1.36 or later, and Helm's default is older.
var KubeVersion = chartutil.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}

// Set is one directory of plain manifests: the chart rendered with Values.
type Set struct {
	// Dir is the directory, relative to [ManifestsDir].
	Dir string
	// Values are the values given on top of values.yaml.
	Values map[string]any
	// Namespace, when true, adds a Namespace object labelled for the
	// restricted Pod Security level to the kustomization.
	Namespace bool
}

// Sets are the directories of plain manifests: the default render (the
// pod-certificate signer), and the GMSA webhook alone with its certificate
// from cert-manager.
func Sets() []Set {
	return []Set{
		{Dir: ".", Namespace: true},
		{Dir: "gmsa-webhook", Values: map[string]any{
			"podcert": map[string]any{"enabled": false},
			"webhook": map[string]any{"enabled": true},
		}},
	}
}

// Render renders the chart at dir as "helm template" does, for release
// name and namespace with vals over values.yaml, and returns the manifest:
// YAML documents, each after a "# Source:" comment.
func Render(dir, release, namespace string, vals map[string]any) (string, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return "", fmt.Errorf("loading the chart %s: %w", dir, err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = release
	install.Namespace = namespace
	kv := KubeVersion
	install.KubeVersion = &kv
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return "", fmt.Errorf("rendering the chart %s: %w", dir, err)
	}
	var out strings.Builder
	out.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return out.String(), nil
}

// Lint lints the chart at dir as "helm lint --strict" does, with vals over
// values.yaml (the schema checked), and returns every message of
// severity warning or above as one error.
func Lint(dir string, vals map[string]any) error {
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = Namespace
	kv := KubeVersion
	lint.KubeVersion = &kv
	res := lint.Run([]string{dir}, vals)
	var errs []error
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			errs = append(errs, fmt.Errorf("%s", m.Error()))
		}
	}
	errs = append(errs, res.Errors...)
	return errors.Join(errs...)
}

// Documents splits a manifest into its YAML documents, leaving out empty
// ones and those holding comments only.
func Documents(manifest []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if hasContent(doc) {
			docs = append(docs, doc)
		}
	}
}

// hasContent reports whether a YAML document has a line that is not blank
// or a comment.
func hasContent(doc []byte) bool {
	for line := range strings.SplitSeq(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && line != "---" && !strings.HasPrefix(line, "#") {
			return true
		}
	}
	return false
}

// header starts every generated file.
const header = "# Generated from deploy/charts/ksa by \"cd interop && go run ./deploy/render\"; do not edit.\n"

// Files returns the plain manifests of every set, by path relative to the
// repository's root: the render (ksa.yaml), a kustomization.yaml listing
// it and, for a set with Namespace, namespace.yaml.
func Files(root string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, s := range Sets() {
		manifest, err := Render(filepath.Join(root, ChartDir), Release, Namespace, s.Values)
		if err != nil {
			return nil, err
		}
		dir := filepath.ToSlash(filepath.Join(ManifestsDir, s.Dir))
		files[dir+"/ksa.yaml"] = []byte(header + strings.TrimLeft(manifest, "-\n"))
		resources := "  - ksa.yaml\n"
		if s.Namespace {
			resources = "  - namespace.yaml\n" + resources
			files[dir+"/namespace.yaml"] = []byte(header + namespaceYAML)
		}
		files[dir+"/kustomization.yaml"] = []byte(header +
			"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" + resources)
	}
	return files, nil
}

// namespaceYAML is the namespace of the plain manifests, held to the
// restricted Pod Security level.
const namespaceYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: ` + Namespace + `
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/audit: restricted
`

// Write writes [Files] under root, replacing what is there.
func Write(root string) ([]string, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var written []string
	for path, data := range files {
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if old, err := os.ReadFile(full); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}
