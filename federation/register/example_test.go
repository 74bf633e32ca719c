package register_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation/register"
)

func ExampleAWS() {
	reg, err := register.AWS(register.AWSConfig{
		Issuer:          "https://oidc.example.com/cluster-1",
		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "prod", Name: "billing"}},
		AccountID:       "111122223333",
		Role:            "billing",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(reg.Commands[0], " "))
	body, _ := json.Marshal(reg.Requests[0].Body)
	fmt.Println(reg.Requests[0].Method, reg.Requests[0].URL, string(body))
	// Output:
	// aws iam create-open-id-connect-provider --url https://oidc.example.com/cluster-1 --client-id-list sts.amazonaws.com
	// POST https://iam.amazonaws.com/?Action=CreateOpenIDConnectProvider {"ClientIDList":["sts.amazonaws.com"],"Url":"https://oidc.example.com/cluster-1"}
}

func ExampleGCP() {
	_, err := register.GCP(register.GCPConfig{
		Issuer:          "https://oidc.example.com/cluster-1",
		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "prod", Name: "billing"}},
		ProjectNumber:   "123456789012",
		Pool:            "gcp-pool", // a prefix Google reserves
		Provider:        "cluster-1-oidc",
	})
	fmt.Println(err)
	// Output:
	// register: GCPConfig.Pool "gcp-pool" is not a pool ID
}
