package podcertctl

import (
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// RBACConfig names what [Manifests] grants and to whom.
type RBACConfig struct {
	// SignerName is the signer the controller answers for.
	SignerName string
	// Namespace and ServiceAccount are the identity the controller runs
	// as; the ServiceAccount is part of the manifests.
	Namespace, ServiceAccount string
	// TrustBundleName is the ClusterTrustBundle it publishes. Empty:
	// [DefaultTrustBundleName].
	TrustBundleName string
}

// Manifests renders, as YAML documents, the least RBAC the controller
// needs: the ServiceAccount, a ClusterRole and its ClusterRoleBinding. The
// role reads and watches PodCertificateRequests and updates their status
// (both API versions), holds the sign verb on the signer name (checked on
// every status change) and the attest verb (checked when a
// ClusterTrustBundle names the signer), and creates the trust bundle and
// reads and updates it by name.
func Manifests(cfg RBACConfig) ([]byte, error) {
	if cfg.SignerName == "" || cfg.Namespace == "" || cfg.ServiceAccount == "" {
		return nil, &ConfigError{Field: "RBACConfig", Reason: "SignerName, Namespace and ServiceAccount are required"}
	}
	bundle := cfg.TrustBundleName
	if bundle == "" {
		bundle = DefaultTrustBundleName(cfg.SignerName)
	}
	name := "ksa-podcert-signer:" + strings.ReplaceAll(cfg.SignerName, "/", ":")
	const group = "certificates.k8s.io"
	objs := []any{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: cfg.ServiceAccount, Namespace: cfg.Namespace},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{group}, Resources: []string{"podcertificaterequests"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{group}, Resources: []string{"podcertificaterequests/status"}, Verbs: []string{"update"}},
				{APIGroups: []string{group}, Resources: []string{"signers"}, ResourceNames: []string{cfg.SignerName}, Verbs: []string{"sign", "attest"}},
				{APIGroups: []string{group}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"create"}},
				{APIGroups: []string{group}, Resources: []string{"clustertrustbundles"}, ResourceNames: []string{bundle}, Verbs: []string{"get", "update"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: cfg.ServiceAccount, Namespace: cfg.Namespace}},
		},
	}
	var out bytes.Buffer
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("podcertctl: rendering RBAC: %w", err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(dropCreationTimestamp(b))
	}
	return out.Bytes(), nil
}

// dropCreationTimestamp removes the "creationTimestamp: null" line
// yaml.Marshal writes for an unset ObjectMeta time.
func dropCreationTimestamp(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("  creationTimestamp: null\n"), nil)
}
