package register_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation/register"
)

var (
	billing = ksa.ServiceAccount{Namespace: "prod", Name: "billing"}
	reports = ksa.ServiceAccount{Namespace: "prod", Name: "reports"}
)

// body writes a request body as the cloud receives it.
func body(t *testing.T, r register.Request) string {
	t.Helper()
	b, err := json.Marshal(r.Body)
	require.NoError(t, err)
	return string(b)
}

func TestAzure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      register.AzureConfig
		commands []string
		urls     []string
		bodies   []string
		notes    int
	}{
		{
			name: "a managed identity",
			cfg:  register.AzureConfig{Issuer: "https://oidc.example.com/c/", ServiceAccounts: []ksa.ServiceAccount{billing, reports}, Identity: "billing-id", ResourceGroup: "prod-rg"},
			commands: []string{
				"az identity federated-credential create --name prod-billing --identity-name billing-id --resource-group prod-rg --issuer https://oidc.example.com/c/ --subject system:serviceaccount:prod:billing --audiences api://AzureADTokenExchange",
				"az identity federated-credential create --name prod-reports --identity-name billing-id --resource-group prod-rg --issuer https://oidc.example.com/c/ --subject system:serviceaccount:prod:reports --audiences api://AzureADTokenExchange",
			},
			urls: []string{
				"https://management.azure.com/subscriptions/{subscriptionId}/resourceGroups/prod-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/billing-id/federatedIdentityCredentials/prod-billing?api-version=2023-01-31",
				"https://management.azure.com/subscriptions/{subscriptionId}/resourceGroups/prod-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/billing-id/federatedIdentityCredentials/prod-reports?api-version=2023-01-31",
			},
			bodies: []string{
				`{"properties":{"audiences":["api://AzureADTokenExchange"],"issuer":"https://oidc.example.com/c/","subject":"system:serviceaccount:prod:billing"}}`,
				`{"properties":{"audiences":["api://AzureADTokenExchange"],"issuer":"https://oidc.example.com/c/","subject":"system:serviceaccount:prod:reports"}}`,
			},
			notes: 2,
		},
		{
			name:     "in a subscription, another audience",
			cfg:      register.AzureConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing}, Audience: "api://other", Identity: "id", ResourceGroup: "rg", Subscription: "sub-1"},
			commands: []string{"az identity federated-credential create --name prod-billing --identity-name id --resource-group rg --subscription sub-1 --issuer https://oidc.example.com/c --subject system:serviceaccount:prod:billing --audiences api://other"},
			urls:     []string{"https://management.azure.com/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id/federatedIdentityCredentials/prod-billing?api-version=2023-01-31"},
			bodies:   []string{`{"properties":{"audiences":["api://other"],"issuer":"https://oidc.example.com/c","subject":"system:serviceaccount:prod:billing"}}`},
			notes:    3,
		},
		{
			name:     "an application",
			cfg:      register.AzureConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing}, AppID: "app-1"},
			commands: []string{`az ad app federated-credential create --id app-1 --parameters {"audiences":["api://AzureADTokenExchange"],"issuer":"https://oidc.example.com/c","name":"prod-billing","subject":"system:serviceaccount:prod:billing"}`},
			urls:     []string{"https://graph.microsoft.com/v1.0/applications(appId='app-1')/federatedIdentityCredentials"},
			bodies:   []string{`{"audiences":["api://AzureADTokenExchange"],"issuer":"https://oidc.example.com/c","name":"prod-billing","subject":"system:serviceaccount:prod:billing"}`},
			notes:    2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := register.Azure(tc.cfg)
			require.NoError(t, err)
			assert.Equal(t, "azure", reg.Cloud)
			assert.Equal(t, tc.cfg.Issuer, reg.Issuer)
			require.Len(t, reg.Commands, len(tc.commands))
			for i, c := range reg.Commands {
				assert.Equal(t, tc.commands[i], strings.Join(c, " "))
			}
			require.Len(t, reg.Requests, len(tc.urls))
			for i, r := range reg.Requests {
				assert.Equal(t, tc.urls[i], r.URL)
				assert.Equal(t, tc.bodies[i], body(t, r))
			}
			assert.Len(t, reg.Notes, tc.notes)
		})
	}
}

func TestAWS(t *testing.T) {
	const policy = `{"Statement":[{"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringEquals":{"oidc.example.com/c:aud":"sts.amazonaws.com","oidc.example.com/c:sub":"system:serviceaccount:prod:billing"}},"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::111122223333:oidc-provider/oidc.example.com/c"}}],"Version":"2012-10-17"}`
	reg, err := register.AWS(register.AWSConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing}, AccountID: "111122223333", Role: "billing"})
	require.NoError(t, err)
	require.Len(t, reg.Commands, 2)
	assert.Equal(t, "aws iam create-open-id-connect-provider --url https://oidc.example.com/c --client-id-list sts.amazonaws.com", strings.Join(reg.Commands[0], " "))
	assert.Equal(t, []string{"aws", "iam", "create-role", "--role-name", "billing", "--assume-role-policy-document", policy}, reg.Commands[1])
	require.Len(t, reg.Requests, 2)
	assert.Equal(t, `{"ClientIDList":["sts.amazonaws.com"],"Url":"https://oidc.example.com/c"}`, body(t, reg.Requests[0]))
	assert.Equal(t, "https://iam.amazonaws.com/?Action=CreateRole", reg.Requests[1].URL)
	assert.Equal(t, map[string]any{"RoleName": "billing", "AssumeRolePolicyDocument": policy}, reg.Requests[1].Body)
	assert.Equal(t, []string{"pods get the role through the service account annotation eks.amazonaws.com/role-arn=arn:aws:iam::111122223333:role/billing and tokens for audience sts.amazonaws.com"}, reg.Notes)

	// Without a role, the trust policy is the last body; two service
	// accounts are a list of subjects.
	reg, err = register.AWS(register.AWSConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing, reports}, AccountID: "111122223333"})
	require.NoError(t, err)
	assert.Len(t, reg.Commands, 1)
	last := reg.Requests[len(reg.Requests)-1]
	assert.Empty(t, last.Method+last.URL)
	assert.Contains(t, body(t, last), `"oidc.example.com/c:sub":["system:serviceaccount:prod:billing","system:serviceaccount:prod:reports"]`)
	assert.Contains(t, reg.Notes[0], "AWSConfig.Role prints the command")

	// A policy over IAM's default quota is noted.
	many := make([]ksa.ServiceAccount, 50)
	for i := range many {
		many[i] = ksa.ServiceAccount{Namespace: "prod", Name: "service-account-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))}
	}
	reg, err = register.AWS(register.AWSConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: many, AccountID: "111122223333", Role: "r"})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(reg.Notes, "\n"), "over IAM's default quota of 2048")
}

func TestGCP(t *testing.T) {
	reg, err := register.GCP(register.GCPConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing},
		ProjectNumber: "123456789012", Pool: "cluster-1", Provider: "cluster-1-oidc"})
	require.NoError(t, err)
	require.Len(t, reg.Commands, 2)
	assert.Equal(t, "gcloud iam workload-identity-pools create cluster-1 --project=123456789012 --location=global", strings.Join(reg.Commands[0], " "))
	assert.Equal(t, "gcloud iam workload-identity-pools providers create-oidc cluster-1-oidc --project=123456789012 --location=global --workload-identity-pool=cluster-1 --issuer-uri=https://oidc.example.com/c --attribute-mapping=google.subject=assertion.sub", strings.Join(reg.Commands[1], " "))
	assert.Equal(t, `{"attributeMapping":{"google.subject":"assertion.sub"},"oidc":{"issuerUri":"https://oidc.example.com/c"}}`, body(t, reg.Requests[1]))
	assert.Equal(t, []string{
		"grant roles to principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/cluster-1/subject/system:serviceaccount:prod:billing",
		"request the tokens for audience //iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/cluster-1/providers/cluster-1-oidc (or give GCPConfig.Audience)",
	}, reg.Notes)

	reg, err = register.GCP(register.GCPConfig{Issuer: "https://oidc.example.com/c", ServiceAccounts: []ksa.ServiceAccount{billing},
		ProjectNumber: "1", Pool: "pool", Provider: "prov", Audience: "https://oidc.example.com/gcp", Role: "roles/viewer"})
	require.NoError(t, err)
	require.Len(t, reg.Commands, 3)
	assert.Contains(t, reg.Commands[1], "--allowed-audiences=https://oidc.example.com/gcp")
	assert.Equal(t, "--role=roles/viewer", reg.Commands[2][len(reg.Commands[2])-1])
	assert.Empty(t, reg.Notes)
}

// TestRefused: every configuration a cloud would refuse is a
// *ksa.ConfigError naming its field.
func TestRefused(t *testing.T) {
	const iss = "https://oidc.example.com/c"
	sas := []ksa.ServiceAccount{billing}
	long := ksa.ServiceAccount{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("a", 63)}
	tooMany := make([]ksa.ServiceAccount, register.EntraMaxCredentials+1)
	for i := range tooMany {
		tooMany[i] = ksa.ServiceAccount{Namespace: "a", Name: "s" + string(rune('a'+i))}
	}
	for _, tc := range []struct {
		name  string
		run   func() (*register.Registration, error)
		field string
	}{
		{name: "http issuer", field: "AzureConfig.Issuer", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: "http://oidc.example.com", ServiceAccounts: sas, AppID: "a"})
		}},
		{name: "an issuer with a query", field: "AWSConfig.Issuer", run: func() (*register.Registration, error) {
			return register.AWS(register.AWSConfig{Issuer: iss + "?x=1", ServiceAccounts: sas, AccountID: "111122223333"})
		}},
		{name: "no service account", field: "GCPConfig.ServiceAccounts", run: func() (*register.Registration, error) {
			return register.GCP(register.GCPConfig{Issuer: iss, ProjectNumber: "1", Pool: "pool", Provider: "prov"})
		}},
		{name: "a service account twice", field: "AzureConfig.ServiceAccounts[1]", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: []ksa.ServiceAccount{billing, billing}, AppID: "a"})
		}},
		{name: "a bad namespace", field: "AzureConfig.ServiceAccounts[0]", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: []ksa.ServiceAccount{{Namespace: "Prod", Name: "x"}}, AppID: "a"})
		}},
		{name: "an audience with a space", field: "AWSConfig.Audience", run: func() (*register.Registration, error) {
			return register.AWS(register.AWSConfig{Issuer: iss, ServiceAccounts: sas, Audience: "a b", AccountID: "111122223333"})
		}},
		{name: "no identity", field: "AzureConfig.Identity", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: sas})
		}},
		{name: "two identities", field: "AzureConfig.AppID", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: sas, AppID: "a", Identity: "i", ResourceGroup: "rg"})
		}},
		{name: "no resource group", field: "AzureConfig.ResourceGroup", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: sas, Identity: "i"})
		}},
		{name: "more credentials than an identity holds", field: "AzureConfig.ServiceAccounts", run: func() (*register.Registration, error) {
			return register.Azure(register.AzureConfig{Issuer: iss, ServiceAccounts: tooMany, AppID: "a"})
		}},
		{name: "an account ID of 4 digits", field: "AWSConfig.AccountID", run: func() (*register.Registration, error) {
			return register.AWS(register.AWSConfig{Issuer: iss, ServiceAccounts: sas, AccountID: "1234"})
		}},
		{name: "a project ID for a number", field: "GCPConfig.ProjectNumber", run: func() (*register.Registration, error) {
			return register.GCP(register.GCPConfig{Issuer: iss, ServiceAccounts: sas, ProjectNumber: "my-project", Pool: "pool", Provider: "prov"})
		}},
		{name: "a pool Google reserves", field: "GCPConfig.Pool", run: func() (*register.Registration, error) {
			return register.GCP(register.GCPConfig{Issuer: iss, ServiceAccounts: sas, ProjectNumber: "1", Pool: "gcp-x", Provider: "prov"})
		}},
		{name: "a short provider ID", field: "GCPConfig.Provider", run: func() (*register.Registration, error) {
			return register.GCP(register.GCPConfig{Issuer: iss, ServiceAccounts: sas, ProjectNumber: "1", Pool: "pool", Provider: "p"})
		}},
		{name: "a subject over google.subject's limit", field: "GCPConfig.ServiceAccounts", run: func() (*register.Registration, error) {
			return register.GCP(register.GCPConfig{Issuer: iss, ServiceAccounts: []ksa.ServiceAccount{long}, ProjectNumber: "1", Pool: "pool", Provider: "prov"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := tc.run()
			assert.Nil(t, reg)
			var ce *ksa.ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, "register."+tc.field, ce.Field)
			assert.True(t, strings.HasPrefix(err.Error(), "register: "+tc.field+" "), err.Error())
		})
	}
}
