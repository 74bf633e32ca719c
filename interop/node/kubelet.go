package node

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/internal/proc"
)

// NodeGroup is the group of every node's identity; a node's user is
// "system:node:" and its name.
const NodeGroup = "system:nodes"

// writeKubeletFiles writes the kubelet's credentials (a client
// certificate for system:node:NAME in system:nodes, signed by the control
// plane's CA; a serving certificate for 127.0.0.1), its kubeconfig and its
// configuration.
func (n *Node) writeKubeletFiles() error {
	f := &n.Files
	for _, d := range []string{f.KubeletRoot, f.PodLogs, f.StaticPods, f.VolumePlugins, f.KubeletCerts} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	client, err := n.cp.ClientCert("system:node:"+n.Name, NodeGroup)
	if err != nil {
		return err
	}
	serving, err := n.cp.ServingCert("127.0.0.1", "localhost", n.Name)
	if err != nil {
		return err
	}
	clientKey, err := keyPEM(client)
	if err != nil {
		return err
	}
	servingKey, err := keyPEM(serving)
	if err != nil {
		return err
	}
	config, err := n.kubeletConfig()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		f.KubeletClientCert:  certPEM(client.Leaf),
		f.KubeletClientKey:   clientKey,
		f.KubeletServingCert: certPEM(serving.Leaf),
		f.KubeletServingKey:  servingKey,
		f.KubeletCA:          n.cp.CAPEM,
		f.Kubeconfig:         []byte(n.kubeconfig()),
		f.KubeletConfig:      config,
	}
	for path, data := range files {
		if err := writeFile(path, data); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfig returns the kubelet's kubeconfig: the API server's URL
// ([Config.APIServer]), the control plane's CA, the node's client
// certificate.
func (n *Node) kubeconfig() string {
	f := &n.Files
	return `apiVersion: v1
kind: Config
clusters:
- name: ksa
  cluster:
    server: ` + n.apiServer + `
    certificate-authority: ` + f.KubeletCA + `
users:
- name: node
  user:
    client-certificate: ` + f.KubeletClientCert + `
    client-key: ` + f.KubeletClientKey + `
contexts:
- name: node
  context:
    cluster: ksa
    user: node
current-context: node
`
}

// kubeletConfig returns the kubelet's KubeletConfiguration: cgroupfs on
// cgroup v1 under a cgroup root of the node's own, the node's containerd,
// its own API on loopback with client certificates and webhook
// authorization, no eviction, no image garbage collection, no iptables.
func (n *Node) kubeletConfig() ([]byte, error) {
	f := &n.Files
	c := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:          metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		StaticPodPath:     f.StaticPods,
		PodLogsDir:        f.PodLogs,
		Address:           "127.0.0.1",
		Port:              int32(n.kubeletPort),
		ReadOnlyPort:      0,
		HealthzPort:       ptr.To(int32(0)),
		TLSCertFile:       f.KubeletServingCert,
		TLSPrivateKeyFile: f.KubeletServingKey,
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: f.KubeletCA},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		CgroupDriver:  "cgroupfs",
		CgroupRoot:    n.CgroupRoot,
		CgroupsPerQOS: ptr.To(true),
		// These machines have cgroup v1 (hybrid); 1.35 and later refuse it
		// unless told.
		FailCgroupV1:             ptr.To(false),
		FailSwapOn:               ptr.To(false),
		OOMScoreAdj:              ptr.To(int32(0)),
		ClusterDomain:            "cluster.local",
		ResolverConfig:           ptr.To(""),
		VolumePluginDir:          f.VolumePlugins,
		ContainerRuntimeEndpoint: "unix://" + f.ContainerdSocket,
		ImageServiceEndpoint:     "unix://" + f.ContainerdSocket,
		// One threshold the kubelet ignores (0%), not merged with the
		// defaults: no eviction. (An empty map is left out of the file,
		// and the kubelet takes a missing one for its defaults.)
		EvictionHard:                 map[string]string{"memory.available": "0%"},
		MergeDefaultEvictionSettings: ptr.To(false),
		ImageGCHighThresholdPercent:  ptr.To(int32(100)),
		ImageGCLowThresholdPercent:   ptr.To(int32(99)),
		MakeIPTablesUtilChains:       ptr.To(false),
		RegisterNode:                 ptr.To(true),
		RotateCertificates:           false,
		SerializeImagePulls:          ptr.To(false),
		EnforceNodeAllocatable:       []string{"pods"},
		// Reports and syncs often: tests wait on them.
		NodeStatusUpdateFrequency: metav1.Duration{Duration: 5 * time.Second},
		SyncFrequency:             metav1.Duration{Duration: 10 * time.Second},
		FileCheckFrequency:        metav1.Duration{Duration: 5 * time.Second},
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("node: kubelet configuration: %w", err)
	}
	return out, nil
}

// kubeletArgs are the kubelet's flags: what the configuration file cannot
// say.
func (n *Node) kubeletArgs() []string {
	f := &n.Files
	return []string{
		"--config=" + f.KubeletConfig,
		"--kubeconfig=" + f.Kubeconfig,
		"--root-dir=" + f.KubeletRoot,
		"--cert-dir=" + f.KubeletCerts,
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.NodeIP,
		"--v=2",
	}
}

// startKubelet starts the kubelet and waits until its node is Ready.
func (n *Node) startKubelet(ctx context.Context) error {
	p, err := proc.Start("kubelet", n.bins.Kubelet, n.kubeletArgs(), n.Files.KubeletLog, proc.Config{Output: n.output})
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n.kubelet = p
	nodes := n.cp.Clientset().CoreV1().Nodes()
	return waitFor(ctx, p, "kubelet", func(ctx context.Context) error {
		node, err := nodes.Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("condition Ready is %s: %s %s", c.Status, c.Reason, c.Message)
			}
		}
		return errors.New("no Ready condition yet")
	})
}

// hostIP returns an IPv4 address of the machine that is not loopback, for
// --node-ip: the kubelet refuses a loopback address, and only records
// this one (nothing is sent to it).
func hostIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("node: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("%w: the machine has no IPv4 address but loopback, and the kubelet refuses a loopback --node-ip", ErrInvalidConfig)
}

// certPEM encodes c as a "CERTIFICATE" block.
func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// keyPEM encodes c's private key as a PKCS #8 "PRIVATE KEY" block.
func keyPEM(c tls.Certificate) ([]byte, error) {
	k, ok := c.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("node: certificate key is %T", c.PrivateKey)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("node: encoding a key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
