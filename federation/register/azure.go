package register

import (
	"fmt"
	"net/url"

	"github.com/ksa-go/ksa"
)

// AzureConfig is the registration of service accounts as federated
// identity credentials of one Entra ID identity: a user-assigned managed
// identity (Identity and ResourceGroup, and Subscription) or an
// application (AppID), not both.
type AzureConfig struct {
	// Issuer is the issuer URL, exactly as kube-apiserver's
	// --service-account-issuer says it: an https URL without query,
	// fragment or user information. Required.
	Issuer string
	// ServiceAccounts are the service accounts registered, each once.
	// Required.
	ServiceAccounts []ksa.ServiceAccount
	// Audience is the audience the tokens are requested for; empty means
	// EntraAudience.
	Audience string
	// Identity is the user-assigned managed identity's name; it needs
	// ResourceGroup.
	Identity, ResourceGroup string
	// Subscription is the managed identity's subscription; empty means
	// the az CLI's own, and the request's URL holds {subscriptionId}.
	Subscription string
	// AppID is the application (client) ID of an app registration.
	AppID string
}

// Azure returns the federated identity credentials of cfg's service
// accounts, one each, named NAMESPACE-NAME: az identity
// federated-credential create (a managed identity) or az ad app
// federated-credential create (an application), and the ARM or Microsoft
// Graph request each sends. Audience defaults to EntraAudience. More
// service accounts than EntraMaxCredentials are refused.
func Azure(cfg AzureConfig) (*Registration, error) {
	if cfg.Audience == "" {
		cfg.Audience = EntraAudience
	}
	if err := check("AzureConfig", cfg.Issuer, cfg.ServiceAccounts, cfg.Audience, true); err != nil {
		return nil, err
	}
	switch {
	case cfg.AppID == "" && cfg.Identity == "":
		return nil, configError("AzureConfig.Identity", "is empty, and so is AppID: no identity to register with", nil)
	case cfg.AppID != "" && (cfg.Identity != "" || cfg.ResourceGroup != "" || cfg.Subscription != ""):
		return nil, configError("AzureConfig.AppID", "is given with a managed identity: name one identity", nil)
	case cfg.Identity != "" && cfg.ResourceGroup == "":
		return nil, configError("AzureConfig.ResourceGroup", "is empty: a managed identity needs its resource group", nil)
	case len(cfg.ServiceAccounts) > EntraMaxCredentials:
		return nil, configError("AzureConfig.ServiceAccounts", fmt.Sprintf("%d service accounts: an Entra ID identity holds at most %d federated credentials", len(cfg.ServiceAccounts), EntraMaxCredentials), nil)
	}
	reg := &Registration{Cloud: "azure", Issuer: cfg.Issuer}
	for _, sa := range cfg.ServiceAccounts {
		name, subject, audiences := ficName(sa), sa.Username(), []string{cfg.Audience}
		if cfg.AppID != "" {
			body := map[string]any{"name": name, "issuer": cfg.Issuer, "subject": subject, "audiences": audiences}
			reg.Commands = append(reg.Commands, []string{"az", "ad", "app", "federated-credential", "create", "--id", cfg.AppID, "--parameters", compactJSON(body)})
			reg.Requests = append(reg.Requests, Request{Method: "POST", URL: "https://graph.microsoft.com/v1.0/applications(appId='" + cfg.AppID + "')/federatedIdentityCredentials", Body: body})
			continue
		}
		args := []string{"az", "identity", "federated-credential", "create", "--name", name, "--identity-name", cfg.Identity, "--resource-group", cfg.ResourceGroup}
		sub := "{subscriptionId}"
		if cfg.Subscription != "" {
			args, sub = append(args, "--subscription", cfg.Subscription), cfg.Subscription
		}
		reg.Commands = append(reg.Commands, append(args, "--issuer", cfg.Issuer, "--subject", subject, "--audiences", cfg.Audience))
		reg.Requests = append(reg.Requests, Request{Method: "PUT",
			URL: fmt.Sprintf("https://management.azure.com/subscriptions/%s/resourceGroups/%s/providers/Microsoft.ManagedIdentity/userAssignedIdentities/%s/federatedIdentityCredentials/%s?api-version=2023-01-31",
				sub, url.PathEscape(cfg.ResourceGroup), url.PathEscape(cfg.Identity), name),
			Body: map[string]any{"properties": map[string]any{"issuer": cfg.Issuer, "subject": subject, "audiences": audiences}}})
	}
	holder := "managed identity " + cfg.Identity
	if cfg.AppID != "" {
		holder = "application " + cfg.AppID
	}
	reg.Notes = append(reg.Notes, fmt.Sprintf("%s holds at most %d federated credentials; these are %d of them (az identity federated-credential list shows the others)", holder, EntraMaxCredentials, len(cfg.ServiceAccounts)))
	if cfg.Audience != EntraAudience {
		reg.Notes = append(reg.Notes, "the audience is not "+EntraAudience+", the one Entra ID documents for federated credentials")
	}
	reg.Notes = append(reg.Notes, "Entra ID compares the issuer byte for byte with the tokens' iss: a trailing slash counts (AADSTS700211)")
	return reg, nil
}
