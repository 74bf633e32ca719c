package credspec

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Names of the GMSACredentialSpec API, as windows-gmsa's CRD defines them.
const (
	// Group is the API group of GMSACredentialSpec objects.
	Group = "windows.k8s.io"
	// Version is the served storage version, the one the webhook reads.
	Version = "v1"
	// VersionV1Alpha1 is the deprecated version; it has the same schema
	// and is still served.
	VersionV1Alpha1 = "v1alpha1"
	// Kind is the object kind.
	Kind = "GMSACredentialSpec"
	// ListKind is the kind of a list of them.
	ListKind = "GMSACredentialSpecList"
	// Resource is the plural resource name used in RBAC rules and
	// SubjectAccessReviews.
	Resource = "gmsacredentialspecs"
	// CRDName is the CustomResourceDefinition's name: <resource>.<group>.
	CRDName = Resource + "." + Group
	// VerbUse is the RBAC verb a pod's service account needs on a
	// GMSACredentialSpec to name it.
	VerbUse = "use"
	// ContentsField is the top-level field holding the credential spec
	// (lower case, not under spec).
	ContentsField = "credspec"
)

// GroupVersion returns windows.k8s.io/v1.
func GroupVersion() schema.GroupVersion { return schema.GroupVersion{Group: Group, Version: Version} }

// GroupVersionResource returns windows.k8s.io/v1 gmsacredentialspecs, the
// resource a dynamic client reads.
func GroupVersionResource() schema.GroupVersionResource {
	return GroupVersion().WithResource(Resource)
}

// CredentialSpec is a Windows container credential spec in Microsoft's JSON
// format, the one New-CredentialSpec writes and the CRD's credspec field
// holds. Field names follow Go conventions; the JSON names are Microsoft's
// (CmsPlugins, DomainJoinConfig, ...), case-sensitive.
//
// Every field is omitted from JSON when empty, as a field absent from a
// stored object is. A credential spec that sets a field to the empty string
// therefore does not round-trip byte for byte through this type; the
// [Source] seam carries JSON text for that reason.
type CredentialSpec struct {
	// ActiveDirectoryConfig names the gMSAs the container uses.
	ActiveDirectoryConfig *ActiveDirectoryConfig `json:"ActiveDirectoryConfig,omitempty"`
	// CMSPlugins lists the credential plug-ins; New-CredentialSpec writes
	// ["ActiveDirectory"].
	CMSPlugins []string `json:"CmsPlugins,omitempty"`
	// DomainJoinConfig describes the domain and the primary gMSA.
	DomainJoinConfig *DomainJoinConfig `json:"DomainJoinConfig,omitempty"`
}

// DomainJoinConfig describes the Active Directory domain and the account the
// container runs as.
type DomainJoinConfig struct {
	// DNSName is the domain's DNS root (contoso.com).
	DNSName string `json:"DnsName,omitempty"`
	// DNSTreeName is the forest name.
	DNSTreeName string `json:"DnsTreeName,omitempty"`
	// GUID is the domain's object GUID.
	GUID string `json:"Guid,omitempty"`
	// MachineAccountName is the gMSA's name without the trailing $.
	MachineAccountName string `json:"MachineAccountName,omitempty"`
	// NetBIOSName is the domain's NetBIOS name (CONTOSO).
	NetBIOSName string `json:"NetBiosName,omitempty"`
	// SID is the domain SID.
	SID string `json:"Sid,omitempty"`
}

// ActiveDirectoryConfig lists the group managed service accounts and, for
// hosts that are not domain-joined, the ccg.exe plug-in configuration.
type ActiveDirectoryConfig struct {
	// GroupManagedServiceAccounts is order-sensitive for [Equal].
	GroupManagedServiceAccounts []GroupManagedServiceAccount `json:"GroupManagedServiceAccounts,omitempty"`
	// HostAccountConfig configures the ccg.exe plug-in.
	HostAccountConfig *HostAccountConfig `json:"HostAccountConfig,omitempty"`
}

// GroupManagedServiceAccount names one gMSA and the domain it is valid in.
type GroupManagedServiceAccount struct {
	// Name is the gMSA's name (WebApp01).
	Name string `json:"Name,omitempty"`
	// Scope is the domain, by DNS or NetBIOS name.
	Scope string `json:"Scope,omitempty"`
}

// HostAccountConfig configures the ccg.exe plug-in that fetches the gMSA
// password on hosts that are not domain-joined.
type HostAccountConfig struct {
	// PluginGUID is the plug-in's COM CLSID, braces included.
	PluginGUID string `json:"PluginGUID,omitempty"`
	// PluginInput is plug-in specific (for the Azure Key Vault plug-in
	// "ObjectId=...;SecretUri=..."). It can be sensitive.
	PluginInput string `json:"PluginInput,omitempty"`
	// PortableCCGVersion should be "1".
	PortableCCGVersion string `json:"PortableCcgVersion,omitempty"`
}

// GMSACredentialSpec is the cluster-scoped windows.k8s.io object a pod names
// in securityContext.windowsOptions.gmsaCredentialSpecName. It implements
// runtime.Object; v1 and v1alpha1 share this type (see [AddToScheme]).
type GMSACredentialSpec struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// CredSpec is the credential spec, JSON field "credspec".
	CredSpec *CredentialSpec `json:"credspec,omitempty"`
}

// GMSACredentialSpecList is a list of GMSACredentialSpec objects.
type GMSACredentialSpecList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the objects.
	Items []GMSACredentialSpec `json:"items"`
}

// NewGMSACredentialSpec returns a windows.k8s.io/v1 object named name
// holding spec (not copied).
func NewGMSACredentialSpec(name string, spec *CredentialSpec) *GMSACredentialSpec {
	return &GMSACredentialSpec{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion().String(), Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		CredSpec:   spec,
	}
}
