package registrytoken_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/registrytoken"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// A pod's service-account token, sent as the Basic password a credential
// provider hands the kubelet, gets a registry token for the repositories
// its service account may pull.
func Example() {
	now := time.Now()
	// The cluster's issuer and an offline verifier of its tokens.
	clusterKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: clusterKey})
	pub, _ := jwks.NewKey(clusterKey.Public())
	keys, _ := jwks.NewStaticSource(pub)
	verifier, _ := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{"https://issuer.example"}, Keys: keys,
		Audiences: []string{"registry.example"}, SkipObjectCheck: true,
	})

	registryKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv, err := registrytoken.New(registrytoken.Config{
		Issuer:  "ksa-registry-token",
		Service: "registry.example",
		Signer:  registryKey,
		Check:   credprovider.TokenCheck{Verify: verifier.ValidateFor, Audience: "registry.example"},
		Rules: []registrytoken.Rule{
			{Namespace: "team", ServiceAccount: "app", Repositories: []string{"team/*"}},
		},
		Now: func() time.Time { return now },
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, name := range []string{"app", "intruder"} {
		tok, _ := minter.Mint(context.Background(), tokens.Request{
			ServiceAccount: ksa.ServiceAccount{Namespace: "team", Name: name, UID: "uid-" + name},
			Audiences:      []string{"registry.example"},
			BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: name + "-pod", UID: "uid-pod"},
		})
		r := httptest.NewRequest(http.MethodGet, "/token?service=registry.example&scope=repository:team/app:pull,push", nil)
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("ksa:"+tok.Raw)))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		var resp registrytoken.Response
		_ = json.Unmarshal(w.Body.Bytes(), &resp)
		fmt.Println(name, w.Code, resp.ExpiresIn)
	}
	// Output:
	// app 200 300
	// intruder 403 0
}
