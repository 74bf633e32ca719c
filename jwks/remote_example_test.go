package jwks_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ksa-go/ksa/jwks"
)

// A remote key set, served here by httptest as kube-apiserver serves
// /openid/v1/jwks. Nothing is fetched until the first Keys call; the keys
// then stay fresh for the response's max-age, and an unknown key ID fetches
// again (rate-limited) before answering with no keys and no error.
func ExampleNewRemote() {
	// The key set kube-apiserver serves for two keys (RSA and P-256).
	doc := []byte(`{"keys":[` +
		`{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"},` +
		`{"use":"sig","kty":"RSA","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU","alg":"RS256","n":"249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw","e":"AQAB"}]}`)
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
	fmt.Println(len(found), found[0].KeyID, found[0].Algorithm)

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
