// Command quickstart walks through ksa end to end with embedded defaults and
// no cluster or cloud, everything on loopback:
//
//  1. the cluster side mints a pod-bound service-account token with a fresh
//     key, as kube-apiserver's TokenRequest API does;
//
//  2. it publishes the OIDC discovery document and JWKS, as kube-apiserver
//     does, on a local HTTPS server;
//
//  3. a relying party discovers the issuer and verifies the token with
//     nothing but the issuer URL, and prints the identity it proves;
//
//  4. the pod exchanges its projected token for a Microsoft Entra ID access
//     token with the Azure SDK, against a local Entra stand-in that checks
//     the federated identity credential.
//
//     go run ./examples/quickstart
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	sa := ksa.ServiceAccount{Namespace: "payments", Name: "billing", UID: "9e1f3c7a-52b4-4d5e-8f6a-1b2c3d4e5f60"}

	// 1. The cluster: a signing key (kube-apiserver's
	//    --service-account-signing-key-file; RSA, as Entra ID requires RS256
	//    of federated tokens) and an issuer URL served over HTTPS (here a
	//    local server; its URL is the issuer).
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	signing, err := jwks.NewKey(key)
	if err != nil {
		return err
	}
	var issuerHandler http.Handler
	issuerSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { issuerHandler.ServeHTTP(w, r) }))
	defer issuerSrv.Close()
	issuer := issuerSrv.URL
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key})
	if err != nil {
		return err
	}
	tok, err := minter.Mint(ctx, tokens.Request{
		ServiceAccount:    sa,
		Audiences:         []string{federation.DefaultAudience},
		ExpirationSeconds: 3600,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-7d4f8b9c6-x2x4z", UID: "7f2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
		Node:              &ksa.ObjectRef{Name: "node-1", UID: "1a2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "1. minted a %d-byte token for %s, expires %s\n", len(tok.Raw), tok.Claims.Subject, tok.ExpirationTimestamp.UTC().Format(time.RFC3339))

	// 2. Publish discovery and the JWKS exactly as kube-apiserver does.
	handler, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: issuer, JWKSURI: oidc.JWKSURL(issuer), Keys: []jwks.Key{signing}})
	if err != nil {
		return err
	}
	issuerHandler = handler
	if err := jwks.Audit(handler.Documents().JWKS); err != nil {
		return err
	}
	fmt.Fprintf(out, "2. serving %s%s and %s (public keys only, audited)\n", issuer, oidc.DiscoveryPath, oidc.JWKSPath)

	// 3. A relying party that knows only the issuer URL.
	verifier, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{
		Issuers:   []string{issuer},
		Client:    issuerSrv.Client(),
		Audiences: []string{federation.DefaultAudience},
	})
	if err != nil {
		return err
	}
	res, err := verifier.Verify(ctx, tok.Raw)
	if err != nil {
		return err
	}
	user := res.UserInfo()
	fmt.Fprintf(out, "3. verified with key %s (%s) for audiences %v\n", res.KeyID, res.Algorithm, res.Audiences)
	fmt.Fprintf(out, "   username: %s\n   uid:      %s\n   groups:   %s\n", user.Username, user.UID, strings.Join(user.Groups, ", "))
	extras := make([]string, 0, len(user.Extra))
	for k, v := range user.Extra {
		extras = append(extras, fmt.Sprintf("%s=%s", k, strings.Join(v, ",")))
	}
	sort.Strings(extras)
	for _, e := range extras {
		fmt.Fprintf(out, "   extra:    %s\n", e)
	}
	if _, err := verifier.VerifyFor(ctx, tok.Raw, []string{"https://vault.example.com"}); errors.Is(err, tokens.ErrAudienceMismatch) {
		fmt.Fprintf(out, "   a token for another audience is refused: %v\n", err)
	}

	// 4. Workload identity federation: the kubelet writes the token into the
	//    pod; the Azure SDK exchanges it at Entra ID (a local stand-in with
	//    one federated identity credential).
	const tenantID, clientID = "contoso", "00000000-0000-0000-0000-0000000000b1"
	entra, err := entratest.NewServer(entratest.Config{
		TenantID:     tenantID,
		IssuerClient: issuerSrv.Client(),
		Apps: []entratest.App{{ClientID: clientID, Credentials: []entratest.FederatedCredential{
			{Issuer: issuer, Subject: sa.Username(), Audience: federation.DefaultAudience},
		}}},
	})
	if err != nil {
		return err
	}
	defer entra.Close()
	dir, err := os.MkdirTemp("", "ksa-quickstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tokenFile := filepath.Join(dir, "azure-identity-token")
	if err := os.WriteFile(tokenFile, []byte(tok.Raw), 0o600); err != nil {
		return err
	}
	cred, err := federation.NewAzureCredential(federation.AzureConfig{
		ClientID:  clientID,
		TenantID:  tenantID,
		TokenFile: tokenFile,
		Issuer:    issuer,
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: entra.URL()},
			Transport: entra.Client(),
		},
		DisableInstanceDiscovery: true,
		Getenv:                   func(string) string { return "" }, // ignore this machine's AZURE_* variables
	})
	if err != nil {
		return err
	}
	access, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/.default"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "4. exchanged the projected token for an Entra ID access token (%d bytes, valid until %s)\n", len(access.Token), access.ExpiresOn.UTC().Format(time.RFC3339))
	return nil
}
