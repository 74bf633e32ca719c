package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
)

// entra exchanges a token at a local Entra ID stand-in, through the Azure
// SDK, as a workload does; the stand-in fetches the issuer's discovery
// document and key set over https as Entra ID does, trusting CA:
//
//	entra CA ISSUER SUBJECT TOKEN
func cmdEntra(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: entra CA ISSUER SUBJECT TOKEN")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ts.ReadFile(args[0]))) {
		ts.Fatalf("%s holds no certificate", args[0])
	}
	issuerClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	const tenant, client = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"
	entra, err := entratest.NewServer(entratest.Config{
		TenantID:     tenant,
		IssuerClient: issuerClient,
		Apps: []entratest.App{{ClientID: client, Credentials: []entratest.FederatedCredential{
			{Issuer: args[1], Subject: args[2], Audience: federation.DefaultAudience},
		}}},
	})
	ts.Check(err)
	defer entra.Close()
	cred, err := federation.NewAzureCredential(federation.AzureConfig{
		ClientID: client, TenantID: tenant, TokenFile: ts.MkAbs(args[3]), Issuer: args[1],
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: entra.URL()},
			Transport: entra.Client(),
			Retry:     policy.RetryOptions{MaxRetries: -1},
		},
		DisableInstanceDiscovery: true,
		Getenv:                   func(string) string { return "" },
	})
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/.default"}})
	switch {
	case err != nil && !neg:
		ts.Fatalf("the Entra ID stand-in refused the token: %v", err)
	case err == nil && neg:
		ts.Fatalf("the Entra ID stand-in exchanged the token")
	case err == nil && tok.Token == "":
		ts.Fatalf("no access token")
	}
	if err != nil {
		ts.Logf("refused: %v", err)
	}
}
