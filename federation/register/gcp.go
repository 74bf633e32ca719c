package register

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ksa-go/ksa"
)

// GCPConfig is the registration of an issuer as the OIDC provider of a
// Google workload identity pool, and of service accounts as its
// principals.
type GCPConfig struct {
	// Issuer is the issuer URL, exactly as kube-apiserver's
	// --service-account-issuer says it: an https URL without query,
	// fragment or user information. Required.
	Issuer string
	// ServiceAccounts are the service accounts registered, each once.
	// Required.
	ServiceAccounts []ksa.ServiceAccount
	// Audience, when set, is the provider's allowed audience; empty,
	// tokens are requested for the provider's own name.
	Audience string
	// ProjectNumber is the project's number (not its ID).
	ProjectNumber string
	// Pool and Provider are the pool's and the provider's IDs: 4 to 32
	// lower-case letters, digits or hyphens, not starting with gcp-.
	Pool, Provider string
	// Role, when set, is a role granted on the project to each service
	// account's principal.
	Role string
}

var (
	gcpNumber = regexp.MustCompile(`^[0-9]{1,20}$`)
	gcpID     = regexp.MustCompile(`^[a-z0-9-]{4,32}$`)
)

// GCP returns the workload identity pool and its OIDC provider for cfg's
// issuer, google.subject mapped from the token's sub: gcloud iam
// workload-identity-pools create and providers create-oidc, with the
// requests they send, and each service account's principal (granted Role
// on the project with gcloud projects add-iam-policy-binding, or noted).
// Audience, when set, is the provider's allowed audience; empty, tokens
// are requested for the provider's own name. A username longer than
// GoogleMaxSubject is refused.
func GCP(cfg GCPConfig) (*Registration, error) {
	if err := check("GCPConfig", cfg.Issuer, cfg.ServiceAccounts, cfg.Audience, false); err != nil {
		return nil, err
	}
	switch {
	case !gcpNumber.MatchString(cfg.ProjectNumber):
		return nil, configError("GCPConfig.ProjectNumber", fmt.Sprintf("%q is not a project number", cfg.ProjectNumber), nil)
	case !gcpID.MatchString(cfg.Pool) || strings.HasPrefix(cfg.Pool, "gcp-"):
		return nil, configError("GCPConfig.Pool", fmt.Sprintf("%q is not a pool ID", cfg.Pool), nil)
	case !gcpID.MatchString(cfg.Provider) || strings.HasPrefix(cfg.Provider, "gcp-"):
		return nil, configError("GCPConfig.Provider", fmt.Sprintf("%q is not a provider ID", cfg.Provider), nil)
	}
	for _, sa := range cfg.ServiceAccounts {
		if n := len(sa.Username()); n > GoogleMaxSubject {
			return nil, configError("GCPConfig.ServiceAccounts", fmt.Sprintf("subject %s is %d bytes: google.subject holds at most %d", sa.Username(), n, GoogleMaxSubject), nil)
		}
	}
	pool := "projects/" + cfg.ProjectNumber + "/locations/global/workloadIdentityPools/" + cfg.Pool
	oidc := map[string]any{"issuerUri": cfg.Issuer}
	provider := []string{"gcloud", "iam", "workload-identity-pools", "providers", "create-oidc", cfg.Provider,
		"--project=" + cfg.ProjectNumber, "--location=global", "--workload-identity-pool=" + cfg.Pool,
		"--issuer-uri=" + cfg.Issuer, "--attribute-mapping=google.subject=assertion.sub"}
	if cfg.Audience != "" {
		oidc["allowedAudiences"] = []string{cfg.Audience}
		provider = append(provider, "--allowed-audiences="+cfg.Audience)
	}
	reg := &Registration{Cloud: "gcp", Issuer: cfg.Issuer,
		Commands: [][]string{{"gcloud", "iam", "workload-identity-pools", "create", cfg.Pool, "--project=" + cfg.ProjectNumber, "--location=global"}, provider},
		Requests: []Request{
			{Method: "POST", URL: "https://iam.googleapis.com/v1/projects/" + cfg.ProjectNumber + "/locations/global/workloadIdentityPools?workloadIdentityPoolId=" + cfg.Pool, Body: map[string]any{}},
			{Method: "POST", URL: "https://iam.googleapis.com/v1/" + pool + "/providers?workloadIdentityPoolProviderId=" + cfg.Provider,
				Body: map[string]any{"attributeMapping": map[string]string{"google.subject": "assertion.sub"}, "oidc": oidc}},
		}}
	for _, sa := range cfg.ServiceAccounts {
		principal := "principal://iam.googleapis.com/" + pool + "/subject/" + sa.Username()
		if cfg.Role != "" {
			reg.Commands = append(reg.Commands, []string{"gcloud", "projects", "add-iam-policy-binding", cfg.ProjectNumber, "--member=" + principal, "--role=" + cfg.Role})
		} else {
			reg.Notes = append(reg.Notes, "grant roles to "+principal)
		}
	}
	if cfg.Audience == "" {
		reg.Notes = append(reg.Notes, "request the tokens for audience //iam.googleapis.com/"+pool+"/providers/"+cfg.Provider+" (or give GCPConfig.Audience)")
	}
	return reg, nil
}
