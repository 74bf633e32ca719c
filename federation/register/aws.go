package register

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ksa-go/ksa"
)

// AWSConfig is the registration of an issuer as an AWS IAM OIDC identity
// provider, and of service accounts in a role's trust policy (IRSA).
type AWSConfig struct {
	// Issuer is the issuer URL, exactly as kube-apiserver's
	// --service-account-issuer says it: an https URL without query,
	// fragment or user information. Required.
	Issuer string
	// ServiceAccounts are the service accounts registered, each once.
	// Required.
	ServiceAccounts []ksa.ServiceAccount
	// Audience is the audience the tokens are requested for, the
	// provider's client ID; empty means AWSAudience.
	Audience string
	// AccountID is the AWS account holding the provider: 12 digits.
	AccountID string
	// Role, when set, is a role to create with the trust policy.
	Role string
}

var awsAccountID = regexp.MustCompile(`^[0-9]{12}$`)

// AWS returns the IAM OIDC identity provider of cfg's issuer (its
// audience, the client ID, AWSAudience by default) and the trust policy
// that lets the service accounts assume a role with their tokens: aws iam
// create-open-id-connect-provider and, with Role, aws iam create-role,
// with the requests they send. Without Role the trust policy is the last
// request's body, without method or URL.
func AWS(cfg AWSConfig) (*Registration, error) {
	if cfg.Audience == "" {
		cfg.Audience = AWSAudience
	}
	if err := check("AWSConfig", cfg.Issuer, cfg.ServiceAccounts, cfg.Audience, true); err != nil {
		return nil, err
	}
	if !awsAccountID.MatchString(cfg.AccountID) {
		return nil, configError("AWSConfig.AccountID", fmt.Sprintf("%q is not an AWS account ID", cfg.AccountID), nil)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(cfg.Issuer, "https://"), "/")
	subs := make([]string, len(cfg.ServiceAccounts))
	for i, sa := range cfg.ServiceAccounts {
		subs[i] = sa.Username()
	}
	var sub any = subs
	if len(subs) == 1 {
		sub = subs[0]
	}
	trust := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Principal": map[string]any{"Federated": "arn:aws:iam::" + cfg.AccountID + ":oidc-provider/" + host},
			"Action":    "sts:AssumeRoleWithWebIdentity",
			"Condition": map[string]any{"StringEquals": map[string]any{host + ":aud": cfg.Audience, host + ":sub": sub}},
		}},
	}
	reg := &Registration{Cloud: "aws", Issuer: cfg.Issuer,
		Commands: [][]string{{"aws", "iam", "create-open-id-connect-provider", "--url", cfg.Issuer, "--client-id-list", cfg.Audience}},
		Requests: []Request{{Method: "POST", URL: "https://iam.amazonaws.com/?Action=CreateOpenIDConnectProvider",
			Body: map[string]any{"Url": cfg.Issuer, "ClientIDList": []string{cfg.Audience}}}}}
	policy := compactJSON(trust)
	role := cfg.Role
	if role != "" {
		reg.Commands = append(reg.Commands, []string{"aws", "iam", "create-role", "--role-name", role, "--assume-role-policy-document", policy})
		reg.Requests = append(reg.Requests, Request{Method: "POST", URL: "https://iam.amazonaws.com/?Action=CreateRole", Body: map[string]any{"RoleName": role, "AssumeRolePolicyDocument": policy}})
	} else {
		role = "ROLE"
		reg.Requests = append(reg.Requests, Request{Body: trust})
		reg.Notes = append(reg.Notes, "the last body is the role trust policy: give it to aws iam create-role or update-assume-role-policy (AWSConfig.Role prints the command)")
	}
	if len(policy) > AWSTrustPolicyChars {
		reg.Notes = append(reg.Notes, fmt.Sprintf("the trust policy is %d characters, over IAM's default quota of %d: raise the quota (up to 4096) or split the service accounts over roles", len(policy), AWSTrustPolicyChars))
	}
	reg.Notes = append(reg.Notes, "pods get the role through the service account annotation eks.amazonaws.com/role-arn=arn:aws:iam::"+cfg.AccountID+":role/"+role+" and tokens for audience "+cfg.Audience)
	return reg, nil
}
