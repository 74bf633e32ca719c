package federation_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/ksa-go/ksa/federation"
)

// Configuration comes from the webhook's environment unless options say
// otherwise.
func ExampleNewAzureCredential() {
	env := map[string]string{
		federation.EnvClientID:      "00000000-0000-0000-0000-000000000001",
		federation.EnvTenantID:      "contoso.onmicrosoft.com",
		federation.EnvTokenFile:     federation.TokenPath,
		federation.EnvAuthorityHost: "https://login.microsoftonline.com/",
	}
	cred, err := federation.NewAzureCredential(federation.AzureConfig{
		Getenv: func(k string) string { return env[k] }, // nil: os.Getenv
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cred.ClientID(), cred.TenantID(), cred.AuthorityHost())
	// Output: 00000000-0000-0000-0000-000000000001 contoso.onmicrosoft.com https://login.microsoftonline.com/
}

// A projected token with the wrong audience is refused before anything is
// sent, with an error saying so. The audience is read from the token about
// to be sent.
func ExamplePreflightError() {
	enc := base64.RawURLEncoding.EncodeToString
	raw := enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." +
		enc([]byte(`{"aud":["https://kubernetes.default.svc"],"exp":4102444800,"iss":"https://oidc.example.com","sub":"system:serviceaccount:prod:billing"}`)) +
		"." + enc([]byte("signature"))
	cred, err := federation.NewAzureCredential(federation.AzureConfig{
		ClientID: "my-app", TenantID: "my-tenant",
		// Real programs use a tokens.FileSource (the default).
		Source: federation.TokenSourceFunc(func(context.Context) (string, error) { return raw, nil }),
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"https://vault.azure.net/.default"}})
	var pf *federation.PreflightError
	fmt.Println(errors.As(err, &pf), errors.Is(err, federation.ErrAssertionAudience))
	fmt.Println(pf.Check, pf.Want)
	// Output:
	// true true
	// audience api://AzureADTokenExchange
}
