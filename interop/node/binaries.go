package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Version is the kubelet release the node runs: the k8s.io/kubernetes
// release the interop module requires, as its kube-apiserver. A kubelet
// may not be newer than its kube-apiserver, so nodes run with control
// planes of this release only.
const Version = "v1.37.2"

// InstallScript installs containerd and runc and builds the kubelet; run
// it from the repository root. It prints one NAME=PATH line per binary.
const InstallScript = ".ci/install-node.sh"

// Environment variables that name the binaries. When one is set, its path
// is used or the start fails with [ErrBinaryMissing]; nothing else is
// searched.
const (
	EnvContainerd = "KSA_CONTAINERD"
	EnvRunc       = "KSA_RUNC"
	EnvKubelet    = "KSA_KUBELET_1_37"
)

// Binaries are the programs a node runs.
type Binaries struct {
	// Containerd, Ctr and Shim (containerd-shim-runc-v2) come with
	// Debian's containerd package; Ctr and Shim are looked for beside
	// Containerd first.
	Containerd, Ctr, Shim string
	// Runc is the OCI runtime containerd runs containers with.
	Runc string
	// Kubelet is a kubelet of [Version].
	Kubelet string
}

// FindBinaries returns the node's programs, or an error matching
// [ErrBinaryMissing] for each one missing (joined).
//
// containerd is $KSA_CONTAINERD when set, else found on $PATH; ctr and
// containerd-shim-runc-v2 beside it, else on $PATH. runc is $KSA_RUNC when set, else found the same way. The kubelet
// is $KSA_KUBELET_1_37 when set, else bin/kubelet-1.37 of the interop
// module (where [InstallScript] builds it), else kubelet on $PATH; it
// must report [Version].
func FindBinaries() (Binaries, error) {
	var b Binaries
	var errs []error
	find := func(dst *string, name, env string, near *string) {
		p, err := lookProgram(name, env, near)
		*dst = p
		errs = append(errs, err)
	}
	find(&b.Containerd, "containerd", EnvContainerd, nil)
	find(&b.Ctr, "ctr", "", &b.Containerd)
	find(&b.Shim, "containerd-shim-runc-v2", "", &b.Containerd)
	find(&b.Runc, "runc", EnvRunc, nil)
	kubelet, err := lookKubelet()
	b.Kubelet = kubelet
	errs = append(errs, err)
	return b, errors.Join(errs...)
}

// lookProgram finds name: at $env when env is set and the variable too,
// else beside *near, else on $PATH.
func lookProgram(name, env string, near *string) (string, error) {
	missing := &BinaryMissingError{Name: name, Install: InstallScript}
	if env != "" {
		if p, ok := os.LookupEnv(env); ok && p != "" {
			if isExecutable(p) {
				return p, nil
			}
			missing.Looked = []string{"$" + env + "=" + p}
			return "", missing
		}
	}
	if near != nil && *near != "" {
		p := filepath.Join(filepath.Dir(*near), name)
		if isExecutable(p) {
			return p, nil
		}
		missing.Looked = append(missing.Looked, p)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	missing.Looked = append(missing.Looked, "$PATH")
	return "", missing
}

// lookKubelet finds the kubelet of Version.
func lookKubelet() (string, error) {
	missing := &BinaryMissingError{Name: "kubelet", Version: Version, Install: InstallScript}
	matches := func(label, p string) bool {
		if !isExecutable(p) {
			missing.Looked = append(missing.Looked, label)
			return false
		}
		got, err := kubeletVersion(p)
		switch {
		case err != nil:
			missing.Looked = append(missing.Looked, fmt.Sprintf("%s (%v)", label, err))
		case got != Version:
			missing.Looked = append(missing.Looked, fmt.Sprintf("%s (%s)", label, got))
		}
		return err == nil && got == Version
	}
	if p, ok := os.LookupEnv(EnvKubelet); ok && p != "" {
		if matches("$"+EnvKubelet+"="+p, p) {
			return p, nil
		}
		return "", missing
	}
	if d := moduleDir(); d != "" {
		p := filepath.Join(d, "bin", "kubelet-"+minor(Version))
		if matches(p, p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("kubelet")
	if err != nil {
		missing.Looked = append(missing.Looked, "$PATH")
		return "", missing
	}
	if matches("$PATH: "+p, p) {
		return p, nil
	}
	return "", missing
}

// kubeletVersion runs "p --version", which prints "Kubernetes v1.37.2".
func kubeletVersion(p string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("--version: %w", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
	if !ok || v == "" || strings.ContainsAny(v, " \n") {
		line, _, _ := strings.Cut(string(out), "\n")
		return "", fmt.Errorf("--version printed %q", line)
	}
	return v, nil
}

// minor returns "1.37" for "v1.37.2".
func minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return parts[0]
	}
	return parts[0] + "." + parts[1]
}

// isExecutable reports whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// moduleDir returns the interop module's directory, found from this
// source file's location, or "" when the binary was built with -trimpath.
func moduleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Dir(filepath.Dir(file))
	}
	return ""
}
