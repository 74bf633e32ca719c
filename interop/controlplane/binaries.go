package controlplane

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Names of the two binaries a control plane runs.
const (
	Etcd          = "etcd"
	KubeAPIServer = "kube-apiserver"
)

// Environment variables that name the binaries explicitly. When one is set,
// its path is used or the start fails with [ErrBinaryMissing]; nothing else is
// searched.
const (
	EnvEtcd          = "KSA_ETCD"
	EnvKubeAPIServer = "KSA_KUBE_APISERVER"
)

// InstallScript installs etcd and builds kube-apiserver; run it from the
// repository root. Its output can be appended to $GITHUB_ENV.
const InstallScript = ".ci/install-controlplane.sh"

// interopModule is the module path whose bin/ directory holds the binaries
// that [InstallScript] builds.
const interopModule = "github.com/ksa-go/ksa/interop"

// Binaries returns the paths of etcd and kube-apiserver as [Start] finds them,
// or an error matching [ErrBinaryMissing] for each one missing (joined).
func Binaries() (etcd, kubeAPIServer string, err error) {
	etcd, etcdErr := etcdBinary.find()
	kubeAPIServer, apiserverErr := apiserverBinary.find()
	return etcd, kubeAPIServer, errors.Join(etcdErr, apiserverErr)
}

// binary says how to find one binary and how to install it.
type binary struct {
	name    string
	env     string
	install string
}

var (
	etcdBinary = binary{
		name:    Etcd,
		env:     EnvEtcd,
		install: InstallScript + " (or: sudo apt-get install -y etcd-server)",
	}
	apiserverBinary = binary{
		name: KubeAPIServer,
		env:  EnvKubeAPIServer,
		install: InstallScript + " (or: cd interop && go build -o bin/kube-apiserver " +
			"k8s.io/kubernetes/cmd/kube-apiserver)",
	}
)

// find returns the path of b, looking in order at: the environment variable
// b.env; bin/ of the interop module; $KUBEBUILDER_ASSETS (where envtest keeps
// its binaries); $PATH.
func (b binary) find() (string, error) {
	missing := &BinaryMissingError{Name: b.name, Install: b.install}
	if p, ok := os.LookupEnv(b.env); ok && p != "" {
		if isExecutable(p) {
			return p, nil
		}
		missing.Looked = []string{"$" + b.env + "=" + p}
		return "", missing
	}
	var dirs []string
	if d := interopBinDir(); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, b.name)
		if isExecutable(p) {
			return p, nil
		}
		missing.Looked = append(missing.Looked, p)
	}
	if p, err := exec.LookPath(b.name); err == nil {
		return p, nil
	}
	missing.Looked = append(missing.Looked, "$PATH")
	return "", missing
}

// isExecutable reports whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// interopBinDir returns the bin/ directory of the interop module: found from
// this source file's location, or else by walking up from the working
// directory (for binaries built with -trimpath). It returns "" if neither
// works.
func interopBinDir() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(filepath.Dir(file)), "bin")
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == interopModule {
			return filepath.Join(dir, "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// modulePath returns the module path declared by the go.mod file at p, or "".
func modulePath(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
