package federation_test

import "github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

func tokenRequest() policy.TokenRequestOptions {
	return policy.TokenRequestOptions{Scopes: []string{scope}}
}
