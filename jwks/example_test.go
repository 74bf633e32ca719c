package jwks_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// Kubernetes names its keys by the SHA-256 of the DER public key; a key file
// passed to kube-apiserver gets the same kid here.
func ExampleKeyID() {
	keys, err := jwks.ParsePublicKeysPEM(testkeys.PEM("k8s-rsa.pub.pem"))
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

// Publishing keys: private keys go in, only their public halves come out,
// byte for byte as kube-apiserver serves them at /openid/v1/jwks.
func ExampleMarshalSet() {
	ec, err := jwks.NewKey(testkeys.K8sEC())
	if err != nil {
		log.Fatal(err)
	}
	rsa, err := jwks.NewKey(testkeys.K8sRSA())
	if err != nil {
		log.Fatal(err)
	}
	rsa.ExcludeFromDiscovery = true // verify-only: not published
	keys := []jwks.Key{ec, rsa}
	doc, err := jwks.MarshalSet(keys)
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
	ec, err := jwks.NewKey(testkeys.K8sEC().Public())
	if err != nil {
		log.Fatal(err)
	}
	rsa, err := jwks.NewKey(testkeys.K8sRSA())
	if err != nil {
		log.Fatal(err)
	}
	src, err := jwks.NewStaticSource(ec, rsa)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	all, _ := src.Keys(ctx, "")
	for _, k := range all {
		fmt.Println(k.KeyID, k.Algorithm)
	}
	rsaKeys, _ := src.Keys(ctx, testkeys.K8sRSAKeyID)
	unknown, _ := src.Keys(ctx, "bogus")
	fmt.Println(len(rsaKeys), len(unknown))
	// Output:
	// SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc ES256
	// JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU RS256
	// 1 0
}
