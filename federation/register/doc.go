// Package register says what registers an issuer's service accounts with
// a cloud's workload identity federation, so that their tokens can be
// exchanged for the cloud's credentials: Microsoft Entra ID's federated
// identity credentials ([Azure]), an AWS IAM OIDC identity provider and a
// role's trust policy for IRSA ([AWS]), and a Google workload identity
// pool, its OIDC provider and each service account's principal ([GCP]).
// It sends nothing: each function returns a [Registration], the command
// lines of the cloud's own CLI (az, aws, gcloud) as argument vectors, and
// the REST requests those commands send, with their JSON bodies, for a
// program (an operator, a Cluster API controller) to send with the
// cloud's SDK or to show to a person; and notes on the cloud's limits.
// What "ksa issuer register azure|aws|gcp" prints is a Registration. The
// package is standard library only.
//
//	reg, err := register.Azure(register.AzureConfig{
//		Issuer:          "https://oidc.example.com/cluster-1",
//		ServiceAccounts: []ksa.ServiceAccount{{Namespace: "prod", Name: "billing"}},
//		Identity:        "billing-id",
//		ResourceGroup:   "prod-rg",
//	})
//	for _, r := range reg.Requests {
//		body, _ := json.Marshal(r.Body)
//		fmt.Println(r.Method, r.URL, string(body))
//	}
//
// Each credential's subject is the service account's username,
// system:serviceaccount:NAMESPACE:NAME, and its issuer the issuer byte for
// byte: every cloud compares it with the tokens' iss, trailing slash
// included. The clouds' limits are checked before anything is rendered:
// at most [EntraMaxCredentials] federated credentials per Entra ID
// identity, at most [GoogleMaxSubject] bytes of google.subject; an AWS
// trust policy longer than IAM's default quota ([AWSTrustPolicyChars]) is
// noted, since the quota can be raised. A configuration the cloud would
// refuse (an account ID that is not 12 digits, a pool ID Google reserves,
// a service account named twice) is a *ksa.ConfigError naming the field,
// such as "register.AWSConfig.AccountID"; it matches ksa.ErrInvalidConfig.
package register
