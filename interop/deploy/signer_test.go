package deploy_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/controlplane"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
	"sigs.k8s.io/yaml"
)

var signerDir = filepath.Join(root, "deploy", "signer")

// socketDir is the directory of the signer's socket.
const (
	socketDir = "/run/ksa-signer"
	socket    = socketDir + "/signer.sock"
)

// TestSignerStaticPod checks the signer's static pod: critical on its
// node, on the host network, its socket in the host's /run/ksa-signer
// (made when missing), the same socket and key as the systemd unit.
func TestSignerStaticPod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(signerDir, "ksa-signer.yaml"))
	require.NoError(t, err)
	obj, _, err := decoder.Decode(b, nil, nil)
	require.NoError(t, err)
	pod, ok := obj.(*corev1.Pod)
	require.True(t, ok)
	assert.Equal(t, "kube-system", pod.Namespace)
	assert.Equal(t, "system-node-critical", pod.Spec.PriorityClassName)
	assert.True(t, pod.Spec.HostNetwork)
	require.Len(t, pod.Spec.Containers, 1)
	c := pod.Spec.Containers[0]
	assert.Equal(t, []string{"signer", "serve"}, c.Args[:2])
	assert.Contains(t, c.Args, "--socket="+socket)
	var hostPath *corev1.HostPathVolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == socketDir {
			hostPath = v.HostPath
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					assert.Equal(t, socketDir, m.MountPath)
				}
			}
		}
	}
	require.NotNil(t, hostPath, "a hostPath volume of %s", socketDir)
	assert.Equal(t, corev1.HostPathDirectoryOrCreate, *hostPath.Type)
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)

	// The systemd unit runs the same command.
	unit := readUnit(t, filepath.Join(signerDir, "ksa-signer.service"))
	exec := strings.Fields(unit["Service.ExecStart"])
	require.NotEmpty(t, exec)
	assert.Equal(t, "/usr/local/bin/ksa", exec[0])
	var unitArgs []string
	for i := 1; i < len(exec); i++ {
		if strings.HasPrefix(exec[i], "--") && i+1 < len(exec) && !strings.HasPrefix(exec[i+1], "--") {
			unitArgs = append(unitArgs, exec[i]+"="+exec[i+1])
			i++
			continue
		}
		unitArgs = append(unitArgs, exec[i])
	}
	assert.Equal(t, c.Args, unitArgs, "the unit and the static pod run the same command")
	assert.Equal(t, "ksa-signer", unit["Service.RuntimeDirectory"], "systemd makes %s", socketDir)
	assert.Equal(t, "0700", unit["Service.RuntimeDirectoryMode"])
	assert.Equal(t, "kubelet.service", unit["Unit.Before"])
}

// readUnit reads a systemd unit's SECTION.Key settings.
func readUnit(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	settings := map[string]string{}
	section := ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "%s: %q", path, line)
			settings[section+"."+k] = v
		}
	}
	require.NoError(t, s.Err())
	return settings
}

// TestKubeadmRecipe runs kubeadm's own code (v1.37.2) on the recipe: the
// control-plane phase of "kubeadm init --config kubeadm-config.yaml" with
// its patches directory writes a kube-apiserver static pod that signs
// through the signer's socket, mounts its directory, and has neither key
// flag; kube-apiserver's flag set parses the command.
func TestKubeadmRecipe(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(signerDir, "kubeadm", "kubeadm-config.yaml"))
	require.NoError(t, err)
	cfg, err := configutil.BytesToInitConfiguration(b, true)
	require.NoError(t, err)
	require.NotNil(t, cfg.Patches)
	assert.Equal(t, "/etc/kubernetes/ksa-signer/patches", cfg.Patches.Directory)
	cfg.LocalAPIEndpoint = kubeadmapi.APIEndpoint{AdvertiseAddress: "10.0.0.1", BindPort: 6443}

	manifests := t.TempDir()
	require.NoError(t, controlplane.CreateStaticPodFiles(manifests, filepath.Join(signerDir, "kubeadm", "patches"),
		&cfg.ClusterConfiguration, &cfg.LocalAPIEndpoint, false, "kube-apiserver"))
	b, err = os.ReadFile(filepath.Join(manifests, "kube-apiserver.yaml"))
	require.NoError(t, err)
	var pod corev1.Pod
	require.NoError(t, yaml.UnmarshalStrict(b, &pod))
	command := pod.Spec.Containers[0].Command
	assert.Contains(t, command, "--service-account-signing-endpoint="+socket)
	for _, arg := range command {
		assert.False(t, strings.HasPrefix(arg, "--service-account-key-file") || strings.HasPrefix(arg, "--service-account-signing-key-file"), arg)
	}
	i := slices.IndexFunc(pod.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == socketDir })
	require.GreaterOrEqual(t, i, 0, "kube-apiserver mounts %s", socketDir)
	i = slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.HostPath != nil && v.HostPath.Path == socketDir })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, corev1.HostPathDirectoryOrCreate, *pod.Spec.Volumes[i].HostPath.Type)

	// kube-apiserver's own flags take the command.
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range apiserveroptions.NewServerRunOptions().Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	require.NoError(t, fs.Parse(command[1:]))

	// Without the patch, kubeadm writes both key flags: the patch is what
	// removes them.
	plain := t.TempDir()
	require.NoError(t, controlplane.CreateStaticPodFiles(plain, "", &cfg.ClusterConfiguration, &cfg.LocalAPIEndpoint, false, "kube-apiserver"))
	b, err = os.ReadFile(filepath.Join(plain, "kube-apiserver.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "--service-account-key-file=")
	assert.Contains(t, string(b), "--service-account-signing-key-file=")
}
