package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Names of the two binaries a control plane runs.
const (
	Etcd          = "etcd"
	KubeAPIServer = "kube-apiserver"
)

// Environment variables that name the binaries explicitly. When one is set,
// its path is used or the start fails with [ErrBinaryMissing]; nothing else is
// searched. [EnvKubeAPIServer] names one kube-apiserver of any release; the
// variable [EnvKubeAPIServerFor] returns names the one of a release, and
// comes first.
const (
	EnvEtcd          = "KSA_ETCD"
	EnvKubeAPIServer = "KSA_KUBE_APISERVER"
)

// InstallScript installs etcd and builds kube-apiserver for each of
// [Versions]; run it from the repository root. It prints one
// NAME=PATH line per binary, which can be appended to $GITHUB_ENV.
const InstallScript = ".ci/install-controlplane.sh"

// interopModule is the module path whose bin/ directory holds the binaries
// that [InstallScript] builds.
const interopModule = "github.com/ksa-go/ksa/interop"

// versions are the releases of [Versions], newest first.
var versions = []string{"v1.37.2", "v1.36.3"}

// Versions returns the kube-apiserver releases the control-plane tests run
// on, newest first: the k8s.io/kubernetes release the interop module
// requires (v1.37.2), and the one the module in interop/apiservers/v1.36
// requires (v1.36.3). [InstallScript] builds both.
func Versions() []string { return append([]string(nil), versions...) }

// EnvKubeAPIServerFor returns the name of the variable that names the
// kube-apiserver binary of version's minor release: KSA_KUBE_APISERVER_1_37
// for "v1.37.2".
func EnvKubeAPIServerFor(version string) string {
	return EnvKubeAPIServer + "_" + strings.ReplaceAll(minor(version), ".", "_")
}

// minor returns "1.37" for "v1.37.2".
func minor(version string) string {
	v := strings.TrimPrefix(version, "v")
	if i := strings.IndexByte(v, '.'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '.'); j >= 0 {
			return v[:i+1+j]
		}
	}
	return v
}

// Binaries returns the paths of etcd and of the kube-apiserver of version
// (one of [Versions]; "" means the newest) as [Start] finds them, or an
// error matching [ErrBinaryMissing] for each one missing (joined).
//
// etcd is the first of: $KSA_ETCD when set (and then nothing else); etcd
// in bin/ of the interop module; in $KUBEBUILDER_ASSETS; on $PATH.
//
// kube-apiserver is the first binary that reports version (with --version)
// among: $KSA_KUBE_APISERVER_1_37 (for v1.37.x) when set, and then nothing
// else; $KSA_KUBE_APISERVER when set, and then nothing else;
// bin/kube-apiserver-1.37 in the interop module, where [InstallScript]
// builds it; kube-apiserver in $KUBEBUILDER_ASSETS; on $PATH.
func Binaries(version string) (etcd, kubeAPIServer string, err error) {
	if version == "" {
		version = versions[0]
	}
	etcd, etcdErr := findEtcd()
	kubeAPIServer, apiserverErr := findAPIServer(version)
	return etcd, kubeAPIServer, errors.Join(etcdErr, apiserverErr)
}

// Install hints, in the messages of [BinaryMissingError].
const (
	etcdInstall      = InstallScript + " (or: sudo apt-get install -y etcd-server)"
	apiserverInstall = InstallScript
)

func findEtcd() (string, error) {
	missing := &BinaryMissingError{Name: Etcd, Install: etcdInstall}
	if p, ok := os.LookupEnv(EnvEtcd); ok && p != "" {
		if isExecutable(p) {
			return p, nil
		}
		missing.Looked = []string{"$" + EnvEtcd + "=" + p}
		return "", missing
	}
	for _, d := range searchDirs() {
		p := filepath.Join(d, Etcd)
		if isExecutable(p) {
			return p, nil
		}
		missing.Looked = append(missing.Looked, p)
	}
	if p, err := exec.LookPath(Etcd); err == nil {
		return p, nil
	}
	missing.Looked = append(missing.Looked, "$PATH")
	return "", missing
}

func findAPIServer(version string) (string, error) {
	missing := &BinaryMissingError{Name: KubeAPIServer, Version: version, Install: apiserverInstall}
	// matches reports whether p is a kube-apiserver of version, and if not
	// records where it looked (and what it found) under label.
	matches := func(label, p string) bool {
		if !isExecutable(p) {
			missing.Looked = append(missing.Looked, label)
			return false
		}
		got, err := binaryVersion(p)
		if err != nil {
			missing.Looked = append(missing.Looked, fmt.Sprintf("%s (%v)", label, err))
			return false
		}
		if got != version {
			missing.Looked = append(missing.Looked, fmt.Sprintf("%s (%s)", label, got))
			return false
		}
		return true
	}
	for _, env := range []string{EnvKubeAPIServerFor(version), EnvKubeAPIServer} {
		if p, ok := os.LookupEnv(env); ok && p != "" {
			if matches("$"+env+"="+p, p) {
				return p, nil
			}
			return "", missing
		}
	}
	var candidates []string
	if d := interopBinDir(); d != "" {
		candidates = append(candidates, filepath.Join(d, KubeAPIServer+"-"+minor(version)))
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		candidates = append(candidates, filepath.Join(d, KubeAPIServer))
	}
	for _, p := range candidates {
		if matches(p, p) {
			return p, nil
		}
	}
	p, err := exec.LookPath(KubeAPIServer)
	if err != nil {
		missing.Looked = append(missing.Looked, "$PATH")
		return "", missing
	}
	if matches("$PATH: "+p, p) {
		return p, nil
	}
	return "", missing
}

// searchDirs returns the directories searched for etcd before $PATH: bin/
// of the interop module, then $KUBEBUILDER_ASSETS (where envtest keeps its
// binaries), each if known.
func searchDirs() []string {
	var dirs []string
	if d := interopBinDir(); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}

// versionCache holds the versions binaryVersion found, by path, size and
// modification time, so that each binary runs once per test process.
var versionCache sync.Map

// binaryVersion runs "p --version" and returns the version kube-apiserver
// prints ("Kubernetes v1.37.2").
func binaryVersion(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", p, fi.Size(), fi.ModTime().UnixNano())
	if v, ok := versionCache.Load(key); ok {
		return v.(string), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("--version: %w", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
	if !ok || v == "" || strings.ContainsAny(v, " \n") {
		return "", fmt.Errorf("--version printed %q", firstLine(string(out)))
	}
	versionCache.Store(key, v)
	return v, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isExecutable reports whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// binDir, when not empty, replaces the interop module's bin/ directory;
// tests of this package set it.
var binDir string

// interopBinDir returns the bin/ directory of the interop module: found from
// this source file's location, or else by walking up from the working
// directory (for binaries built with -trimpath). It returns "" if neither
// works.
func interopBinDir() string {
	if binDir != "" {
		return binDir
	}
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
