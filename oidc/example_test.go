package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// Render the two documents kube-apiserver would serve for an issuer and its
// key.
func ExampleRender() {
	// Kubernetes' own EC test key, as a --service-account-key-file holds it.
	pubs, err := jwks.ParsePublicKeysPEM([]byte(`-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END PUBLIC KEY-----`))
	if err != nil {
		log.Fatal(err)
	}
	key, err := jwks.NewKey(pubs[0])
	if err != nil {
		log.Fatal(err)
	}
	docs, err := oidc.Render(oidc.IssuerConfig{
		Issuer:          "https://issuer.example.com",
		ExternalAddress: "192.0.2.1:443",
	}, []jwks.Key{key})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(docs.Discovery))
	fmt.Println(string(docs.JWKS))
	// Output:
	// {"issuer":"https://issuer.example.com","jwks_uri":"https://192.0.2.1:443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}
	// {"keys":[{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}
}

// Export the documents for blob hosting.
func ExampleWriteStatic() {
	signer, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // or keystore.LoadSigningKeyFile
	if err != nil {
		log.Fatal(err)
	}
	key, err := jwks.NewKey(signer.Public())
	if err != nil {
		log.Fatal(err)
	}
	issuer := "https://mystorage.blob.core.windows.net/oidc/"
	docs, err := oidc.Render(oidc.IssuerConfig{
		Issuer:  issuer,
		JWKSURI: oidc.JWKSURL(issuer), // https://mystorage.blob.core.windows.net/oidc/openid/v1/jwks
	}, []jwks.Key{key})
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "oidc")
	defer os.RemoveAll(dir)
	if err := oidc.WriteStatic(dir, docs); err != nil {
		log.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			fmt.Println(filepath.ToSlash(rel))
		}
		return nil
	})
	// Output:
	// .well-known/openid-configuration
	// openid/v1/jwks
}

// Serve an issuer and verify one of its tokens as a relying party would,
// through discovery and the remote JWKS.
func ExampleNewVerifier() {
	signer, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := jwks.NewKey(signer.Public())

	// The issuer: a TLS server whose URL is the issuer, so the handler is
	// made once the server has its address.
	var handler *oidc.Handler
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer srv.Close()
	handler, err := oidc.NewHandler(oidc.HandlerConfig{Issuer: srv.URL, JWKSURI: oidc.JWKSURL(srv.URL), Keys: []jwks.Key{key}})
	if err != nil {
		log.Fatal(err)
	}
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: srv.URL, Signer: signer})
	tok, _ := minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		Audiences:      []string{"vault"},
	})

	// The relying party.
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{
		Issuers:   []string{srv.URL},
		Client:    srv.Client(),
		Audiences: []string{"vault"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.Verify(context.Background(), tok.Raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.UserInfo().Username, res.Audiences)
	fmt.Println("keys fetched:", v.KeySet(srv.URL).Stats().Fetches)
	// Output:
	// system:serviceaccount:prod:billing [vault]
	// keys fetched: 1
}
