package podcertctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// RBACConfig names what [Manifests] grants and to whom.
type RBACConfig struct {
	// SignerName is the signer the controller answers for: a domain and
	// a path, as Kubernetes validates signer names. Required.
	SignerName string
	// Namespace and ServiceAccount are the identity the controller runs
	// as; the ServiceAccount is part of the manifests. Namespace must be a
	// DNS-1123 label and ServiceAccount a DNS-1123 subdomain. Required.
	Namespace, ServiceAccount string
	// TrustBundleName is the ClusterTrustBundle it publishes, named with
	// the signer name's prefix as the API server requires. Empty:
	// [DefaultTrustBundleName].
	TrustBundleName string
	// LeaseName is the Lease of leader election
	// ([Config.LeaderElection]), in Namespace. Empty: [DefaultLeaseName].
	LeaseName string
	// OmitNamespace leaves the Namespace object out, for a namespace that
	// exists or is managed elsewhere. The zero value includes it: the
	// ServiceAccount cannot be created without its namespace.
	OmitNamespace bool
}

// ErrReservedSignerName: the signer name's domain is kubernetes.io or a
// subdomain of it, which Kubernetes reserves for the signers of the
// Kubernetes project (kube-apiserver applies their rules to such names,
// such as certificates of 24 hours at most): a signer of ours must not
// answer for them. [New] and [Manifests] refuse such a name with a
// *ksa.ConfigError wrapping it.
var ErrReservedSignerName = errs.New(prefix, "the signer name is reserved for the Kubernetes project")

// checkSignerName refuses a signer name of the Kubernetes project; field
// names the configuration field.
func checkSignerName(field, name string) error {
	if podcert.IsKubernetesSignerName(name) {
		return &ksa.ConfigError{Field: field, Err: ErrReservedSignerName,
			Reason: fmt.Sprintf("%q is under kubernetes.io, whose signer names Kubernetes reserves for its own signers", name)}
	}
	return nil
}

// check validates the names as the API server would.
func (cfg RBACConfig) check() error {
	if err := cfg.checkRuleNames(); err != nil {
		return err
	}
	if !ksa.IsNamespace(cfg.Namespace) {
		return &ksa.ConfigError{Field: "podcertctl.RBACConfig.Namespace", Reason: fmt.Sprintf("%q is not a namespace name (a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit)", cfg.Namespace)}
	}
	if !ksa.IsObjectName(cfg.ServiceAccount) {
		return &ksa.ConfigError{Field: "podcertctl.RBACConfig.ServiceAccount", Reason: fmt.Sprintf("%q is not a service account name (a DNS-1123 subdomain)", cfg.ServiceAccount)}
	}
	return nil
}

// checkRuleNames validates the names the rules hold: the signer name and
// the trust bundle's.
func (cfg RBACConfig) checkRuleNames() error {
	if err := x509sa.CheckSignerName(cfg.SignerName); err != nil {
		return &ksa.ConfigError{Field: "podcertctl.RBACConfig.SignerName", Reason: "is not a signer name Kubernetes accepts", Err: err}
	}
	if err := checkSignerName("podcertctl.RBACConfig.SignerName", cfg.SignerName); err != nil {
		return err
	}
	if cfg.LeaseName != "" && !ksa.IsObjectName(cfg.LeaseName) {
		return &ksa.ConfigError{Field: "podcertctl.RBACConfig.LeaseName", Reason: fmt.Sprintf("%q is not an object name (a DNS-1123 subdomain)", cfg.LeaseName)}
	}
	if cfg.TrustBundleName != "" {
		prefix := strings.ReplaceAll(cfg.SignerName, "/", ":") + ":"
		if !strings.HasPrefix(cfg.TrustBundleName, prefix) || len(cfg.TrustBundleName) == len(prefix) {
			return &ksa.ConfigError{Field: "podcertctl.RBACConfig.TrustBundleName", Reason: fmt.Sprintf("%q does not start with %q and a name, as the API server requires for the signer's bundles", cfg.TrustBundleName, prefix)}
		}
	}
	return nil
}

// Rules returns the rules of the controller's ClusterRole, as data for a
// role of one's own (a Helm chart, a manager's manifests): read and watch
// PodCertificateRequests and update their status (both API versions), the
// sign verb on the signer name (checked on every status change) and the
// attest verb (checked when a ClusterTrustBundle names the signer), create
// trust bundles and read and update the controller's by name. It reads
// cfg.SignerName and cfg.TrustBundleName alone; names the API server
// would refuse are a *ksa.ConfigError.
func Rules(cfg RBACConfig) ([]rbacv1.PolicyRule, error) {
	if err := cfg.checkRuleNames(); err != nil {
		return nil, err
	}
	bundle := cfg.TrustBundleName
	if bundle == "" {
		bundle = DefaultTrustBundleName(cfg.SignerName)
	}
	const group = "certificates.k8s.io"
	return []rbacv1.PolicyRule{
		{APIGroups: []string{group}, Resources: []string{"podcertificaterequests"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{group}, Resources: []string{"podcertificaterequests/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{group}, Resources: []string{"signers"}, ResourceNames: []string{cfg.SignerName}, Verbs: []string{"sign", "attest"}},
		{APIGroups: []string{group}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"create"}},
		{APIGroups: []string{group}, Resources: []string{"clustertrustbundles"}, ResourceNames: []string{bundle}, Verbs: []string{"get", "update"}},
	}, nil
}

// LeaseRules returns the rules of the controller's Role in its namespace,
// for leader election ([Config.LeaderElection]): create Leases (a create
// names no object, so it cannot be held to one), and read and update its
// Lease by name. Leases are namespaced: a Role grants them in the
// controller's namespace alone. It reads cfg.SignerName and
// cfg.LeaseName alone; names the API server would refuse are a
// *ksa.ConfigError.
func LeaseRules(cfg RBACConfig) ([]rbacv1.PolicyRule, error) {
	if err := cfg.checkRuleNames(); err != nil {
		return nil, err
	}
	lease := cfg.LeaseName
	if lease == "" {
		lease = DefaultLeaseName(cfg.SignerName)
	}
	const group = "coordination.k8s.io"
	return []rbacv1.PolicyRule{
		{APIGroups: []string{group}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{group}, Resources: []string{"leases"}, ResourceNames: []string{lease}, Verbs: []string{"get", "update"}},
	}, nil
}

// Objects returns what [Manifests] renders, as API objects in the order to
// create them: the Namespace (unless OmitNamespace), the ServiceAccount,
// the ClusterRole of [Rules] and its ClusterRoleBinding, the Role of
// [LeaseRules] in the namespace and its RoleBinding. Names the API server
// would refuse are a *ksa.ConfigError.
func Objects(cfg RBACConfig) ([]runtime.Object, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rules, err := Rules(cfg)
	if err != nil {
		return nil, err
	}
	leaseRules, err := LeaseRules(cfg)
	if err != nil {
		return nil, err
	}
	name := "ksa-podcert-signer:" + strings.ReplaceAll(cfg.SignerName, "/", ":")
	var objs []runtime.Object
	if !cfg.OmitNamespace {
		objs = append(objs, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: cfg.Namespace},
		})
	}
	return append(objs,
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: cfg.ServiceAccount, Namespace: cfg.Namespace},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      rules,
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: cfg.ServiceAccount, Namespace: cfg.Namespace}},
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cfg.Namespace},
			Rules:      leaseRules,
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cfg.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: cfg.ServiceAccount, Namespace: cfg.Namespace}},
		},
	), nil
}

// Manifests renders, as YAML documents, what the controller needs and no
// more: its Namespace (unless OmitNamespace), its ServiceAccount, a
// ClusterRole and its ClusterRoleBinding, a Role for its Lease and its
// RoleBinding. The role reads and watches
// PodCertificateRequests and updates their status (both API versions),
// holds the sign verb on the signer name (checked on every status change)
// and the attest verb (checked when a ClusterTrustBundle names the signer),
// and creates the trust bundle and reads and updates it by name; the Role
// creates Leases in the namespace and reads and updates the controller's
// by name. Names the API server would refuse are a *ksa.ConfigError.
func Manifests(cfg RBACConfig) ([]byte, error) {
	docs, err := cfg.documents()
	if err != nil {
		return nil, err
	}
	return bytes.Join(docs, []byte("---\n")), nil
}

// ManifestsJSON renders the objects of [Manifests] as one JSON v1 List,
// as kubectl get -o json prints several objects.
func ManifestsJSON(cfg RBACConfig) ([]byte, error) {
	docs, err := cfg.documents()
	if err != nil {
		return nil, err
	}
	items := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		if items[i], err = yaml.YAMLToJSON(d); err != nil {
			return nil, wrap(err, "rendering RBAC")
		}
	}
	out, err := json.MarshalIndent(struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}{"v1", "List", items}, "", "  ")
	if err != nil {
		return nil, wrap(err, "rendering RBAC")
	}
	return append(out, '\n'), nil
}

// documents renders each object as a YAML document.
func (cfg RBACConfig) documents() ([][]byte, error) {
	objs, err := Objects(cfg)
	if err != nil {
		return nil, err
	}
	docs := make([][]byte, len(objs))
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, wrap(err, "rendering RBAC")
		}
		docs[i] = dropEmptyFields(b)
	}
	return docs, nil
}

// dropEmptyFields removes the lines yaml.Marshal writes for unset fields
// of a Namespace and of ObjectMeta ("creationTimestamp: null", "spec: {}",
// "status: {}").
func dropEmptyFields(b []byte) []byte {
	for _, line := range []string{"  creationTimestamp: null\n", "spec: {}\n", "status: {}\n"} {
		b = bytes.ReplaceAll(b, []byte(line), nil)
	}
	return b
}
