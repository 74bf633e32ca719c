package jwks_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// A remote key set, served here by httptest as kube-apiserver serves
// /openid/v1/jwks. Nothing is fetched until the first Keys call; the keys
// then stay fresh for the response's max-age, and an unknown key ID fetches
// again (rate-limited) before answering with no keys and no error.
func ExampleNewRemote() {
	keys, err := jwks.Keys(testkeys.K8sEC(), testkeys.K8sRSA())
	if err != nil {
		log.Fatal(err)
	}
	doc, err := jwks.MarshalSet(keys)
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(doc)
	}))
	defer srv.Close()

	remote, err := jwks.NewRemote(jwks.RemoteConfig{
		URL:    srv.URL + "/openid/v1/jwks",
		Client: srv.Client(), // trusts the test server's certificate
		OnFetch: func(ev jwks.FetchEvent) {
			fmt.Printf("fetch (%s): HTTP %d, %d keys, fresh for %v\n", ev.Reason, ev.Status, ev.Keys, ev.MaxAge)
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	found, err := remote.Keys(ctx, "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(found), found[0].ID, found[0].Algorithm)

	missing, err := remote.Keys(ctx, "rotated-away")
	fmt.Println(len(missing), err)

	st := remote.Stats()
	fmt.Println("keys held:", st.Keys, "fetches:", st.Fetches)
	// Output:
	// fetch (initial): HTTP 200, 2 keys, fresh for 1h0m0s
	// 1 SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc ES256
	// fetch (unknown-kid): HTTP 200, 2 keys, fresh for 1h0m0s
	// 0 <nil>
	// keys held: 2 fetches: 2
}
