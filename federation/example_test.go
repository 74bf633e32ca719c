package federation_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/tokens"
)

// staticSource serves one fixed token; real programs use tokens.FileSource.
type staticSource struct{ tok tokens.FileToken }

func (s staticSource) Current(context.Context) (tokens.FileToken, error) { return s.tok, nil }

// Configuration comes from the webhook's environment unless options say
// otherwise.
func ExampleNewAzureCredential() {
	env := map[string]string{
		federation.EnvClientID:      "00000000-0000-0000-0000-000000000001",
		federation.EnvTenantID:      "contoso.onmicrosoft.com",
		federation.EnvTokenFile:     federation.TokenPath,
		federation.EnvAuthorityHost: "https://login.microsoftonline.com/",
	}
	cred, err := federation.NewAzureCredential(&federation.AzureConfig{
		Getenv: func(k string) string { return env[k] }, // nil: os.Getenv
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cred.ClientID(), cred.TenantID(), cred.AuthorityHost())
	// Output: 00000000-0000-0000-0000-000000000001 contoso.onmicrosoft.com https://login.microsoftonline.com/
}

// A projected token with the wrong audience is refused before anything is
// sent, with an error saying so.
func ExamplePreflightError() {
	claims, _ := tokens.ParseClaims([]byte(`{"aud":["https://kubernetes.default.svc"],"exp":4102444800,"iss":"https://oidc.example.com","sub":"system:serviceaccount:prod:billing"}`))
	cred, err := federation.NewAzureCredential(&federation.AzureConfig{
		ClientID: "my-app", TenantID: "my-tenant",
		Source: staticSource{tokens.FileToken{Raw: "a.b.c", Claims: claims}},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = cred.GetToken(context.Background(), tokenRequest())
	var pf *federation.PreflightError
	fmt.Println(errors.As(err, &pf), errors.Is(err, federation.ErrAssertionAudience))
	fmt.Println(pf.Check, pf.Want)
	// Output:
	// true true
	// audience api://AzureADTokenExchange
}
