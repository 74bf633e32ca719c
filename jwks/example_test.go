package jwks_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ksa-go/ksa/jwks"
)

// Kubernetes names its keys by the SHA-256 of the DER public key; a key file
// passed to kube-apiserver gets the same kid here.
func ExampleKeyID() {
	// Kubernetes' RSA test key, as a --service-account-key-file holds it.
	keyFile := []byte(`-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----`)
	keys, err := jwks.ParsePublicKeysPEM(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	kid, err := jwks.KeyID(keys[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(kid)
	// Output: JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU
}

// Publishing keys: the key set kube-apiserver serves at /openid/v1/jwks, byte
// for byte; a verify-only key is left out. Private keys or signers may go
// in too: only their public halves come out.
func ExampleMarshalSet() {
	keyFile := []byte(`-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END PUBLIC KEY-----
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----`)
	pubs, err := jwks.ParsePublicKeysPEM(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	ec, err := jwks.NewKey(pubs[0])
	if err != nil {
		log.Fatal(err)
	}
	rsa, err := jwks.NewKey(pubs[1])
	if err != nil {
		log.Fatal(err)
	}
	rsa.ExcludeFromDiscovery = true // verify-only: not published
	doc, err := jwks.MarshalSet([]jwks.Key{ec, rsa})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(doc))
	// Output: {"keys":[{"use":"sig","kty":"EC","kid":"SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}
}

// Audit finds private key material in a key set before it is published or
// trusted.
func ExampleAudit() {
	doc := []byte(`{"keys":[{"kty":"EC","kid":"k1","crv":"P-256",
		"x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI",
		"y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y",
		"d":"870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"}]}`)
	err := jwks.Audit(doc)
	fmt.Println(err)
	// Output: jwks: key #0 (kid "k1") member "d": private or symmetric key member
}

// A relying party reads an issuer's key set: usable keys are kept, the
// others skipped one by one with the reason.
func ExampleParseSet() {
	doc := []byte(`{"keys":[
		{"kty":"EC","kid":"good","crv":"P-256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"},
		{"kty":"EC","kid":"for-encryption","use":"enc","crv":"P-256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}
	]}`)
	set, err := jwks.ParseSet(doc, jwks.ParseOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range set.Keys {
		fmt.Printf("key %s, %s\n", k.KeyID, k.Algorithm)
	}
	for _, skipped := range set.Skipped {
		fmt.Println("skipped:", skipped)
	}
	// Output:
	// key good, ES256
	// skipped: jwks: key #1 (kid "for-encryption") member "use": use "enc" is not "sig"
}

// A static source serves verification keys by kid, as Kubernetes'
// StaticPublicKeysGetter does for --service-account-key-file.
func ExampleNewStaticSource() {
	keyFile := []byte(`-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END PUBLIC KEY-----
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----`)
	pubs, err := jwks.ParsePublicKeysPEM(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	var keys []jwks.Key
	for _, pub := range pubs {
		key, err := jwks.NewKey(pub)
		if err != nil {
			log.Fatal(err)
		}
		keys = append(keys, key)
	}
	src, err := jwks.NewStaticSource(keys...)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	all, _ := src.Keys(ctx, "")
	for _, k := range all {
		fmt.Println(k.KeyID, k.Algorithm)
	}
	rsaKeys, _ := src.Keys(ctx, "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU")
	unknown, _ := src.Keys(ctx, "bogus")
	fmt.Println(len(rsaKeys), len(unknown))
	// Output:
	// SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc ES256
	// JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU RS256
	// 1 0
}

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
