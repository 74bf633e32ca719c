package credspec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ksa-go/ksa"
)

// CredentialSpecConfig is what New-CredentialSpec reads from Active
// Directory for one gMSA: its account name and its domain, as Get-ADDomain
// prints them on any domain member.
type CredentialSpecConfig struct {
	// Account is the gMSA's sAMAccountName, with or without the trailing
	// $: at most 15 characters. Required.
	Account string
	// DNSName is the domain's DNS name (DNSRoot), e.g. contoso.com.
	// Required.
	DNSName string
	// NetBIOSName is the domain's NetBIOS name, at most 15 characters,
	// e.g. CONTOSO. Required.
	NetBIOSName string
	// GUID is the domain's ObjectGUID; it is written in lower case.
	// Required.
	GUID string
	// SID is the domain's DomainSID, S-1-5-21-x-y-z. Required.
	SID string
	// Forest is the forest's DNS name; empty means DNSName.
	Forest string
	// AdditionalAccounts are more gMSAs the container may use, each its
	// account name and DNS domain (Scope).
	AdditionalAccounts []GroupManagedServiceAccount
	// KeyVaultObjectID and KeyVaultSecretURI, given together, add the
	// HostAccountConfig of ccg.exe's Azure Key Vault plug-in, for nodes
	// that are not domain-joined: the managed identity's object ID and
	// the URI of the secret holding the account's credentials.
	KeyVaultObjectID, KeyVaultSecretURI string
}

// KeyVaultPluginGUID is the plug-in GUID of ccg.exe's Azure Key Vault
// plug-in, in HostAccountConfig.PluginGUID.
const KeyVaultPluginGUID = "{CCC2A336-D7F3-4818-A213-272B7924213E}"

var (
	guidPattern    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	sidPattern     = regexp.MustCompile(`^S-1-5-21-\d+-\d+-\d+$`)
	netbiosPattern = regexp.MustCompile(`^[A-Za-z0-9!@#$%^&'().\-_{}~]{1,15}$`)
	dnsPattern     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)
	accountPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$`)
)

// NewCredentialSpec returns the credential spec PowerShell's
// New-CredentialSpec writes for cfg's account and domain, without a
// domain-joined Windows host: the plug-in ActiveDirectory, the domain and
// the account in DomainJoinConfig, and GroupManagedServiceAccounts listing
// the account under the DNS scope, then the NetBIOS scope, then each
// additional account. A value Active Directory would not hold is a
// *ksa.ConfigError naming its field ("credspec.CredentialSpecConfig.GUID").
func NewCredentialSpec(cfg CredentialSpecConfig) (*CredentialSpec, error) {
	account := strings.TrimSuffix(cfg.Account, "$")
	bad := func(field, format string, value string) error {
		return &ksa.ConfigError{Field: "credspec.CredentialSpecConfig." + field, Reason: fmt.Sprintf(format, value)}
	}
	switch {
	case !accountPattern.MatchString(account):
		return nil, bad("Account", "%q is not a gMSA account name", cfg.Account)
	case !dnsPattern.MatchString(cfg.DNSName):
		return nil, bad("DNSName", "%q is not a DNS domain name (e.g. contoso.com)", cfg.DNSName)
	case !netbiosPattern.MatchString(cfg.NetBIOSName):
		return nil, bad("NetBIOSName", "%q is not a NetBIOS domain name (at most 15 characters, e.g. CONTOSO)", cfg.NetBIOSName)
	case !guidPattern.MatchString(cfg.GUID):
		return nil, bad("GUID", "%q is not a GUID (e.g. 244818ae-87ca-4fcd-92ec-e79e5252348a)", cfg.GUID)
	case !sidPattern.MatchString(cfg.SID):
		return nil, bad("SID", "%q is not a domain SID (S-1-5-21-x-y-z)", cfg.SID)
	case cfg.Forest != "" && !dnsPattern.MatchString(cfg.Forest):
		return nil, bad("Forest", "%q is not a DNS domain name", cfg.Forest)
	case (cfg.KeyVaultObjectID == "") != (cfg.KeyVaultSecretURI == ""):
		return nil, &ksa.ConfigError{Field: "credspec.CredentialSpecConfig.KeyVaultObjectID", Reason: "and KeyVaultSecretURI go together: give both, or neither"}
	}
	forest := cfg.Forest
	if forest == "" {
		forest = cfg.DNSName
	}
	gmsas := []GroupManagedServiceAccount{{Name: account, Scope: cfg.DNSName}, {Name: account, Scope: cfg.NetBIOSName}}
	for i, add := range cfg.AdditionalAccounts {
		name := strings.TrimSuffix(add.Name, "$")
		if !accountPattern.MatchString(name) || !dnsPattern.MatchString(add.Scope) {
			return nil, bad(fmt.Sprintf("AdditionalAccounts[%d]", i), "%q is not a gMSA account name and its DNS domain", add.Name+"@"+add.Scope)
		}
		gmsas = append(gmsas, GroupManagedServiceAccount{Name: name, Scope: add.Scope})
	}
	spec := &CredentialSpec{
		CMSPlugins: []string{"ActiveDirectory"},
		DomainJoinConfig: &DomainJoinConfig{DNSName: cfg.DNSName, GUID: strings.ToLower(cfg.GUID), DNSTreeName: forest,
			NetBIOSName: cfg.NetBIOSName, SID: cfg.SID, MachineAccountName: account},
		ActiveDirectoryConfig: &ActiveDirectoryConfig{GroupManagedServiceAccounts: gmsas},
	}
	if cfg.KeyVaultObjectID != "" {
		spec.ActiveDirectoryConfig.HostAccountConfig = &HostAccountConfig{PortableCCGVersion: "1", PluginGUID: KeyVaultPluginGUID,
			PluginInput: "ObjectId=" + cfg.KeyVaultObjectID + ";SecretUri=" + cfg.KeyVaultSecretURI}
	}
	return spec, nil
}
