package clusterapi_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"sort"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/jwks"
)

// A controller renders the Secret for a cluster's key, creates it with
// its client before the cluster's first control-plane machine, and reads
// it back to learn which key the cluster signs with.
func ExampleNewSecret() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	secret, err := clusterapi.NewSecret("cluster-1", key, clusterapi.SecretOptions{Namespace: "fleet"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(secret.Namespace, secret.Name, secret.Type, secret.Labels)
	var names []string
	for name := range secret.Data {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		block, _ := pem.Decode(secret.Data[name])
		fmt.Printf("%s: %s\n", name, block.Type)
	}

	pair, err := clusterapi.ReadSecret(secret)
	if err != nil {
		log.Fatal(err)
	}
	kid, _ := jwks.KeyID(key)
	fmt.Println(pair.Cluster, pair.KeyID == kid, pair.Keys[0].Algorithm)
	// Output:
	// fleet cluster-1-sa cluster.x-k8s.io/secret map[cluster.x-k8s.io/cluster-name:cluster-1]
	// tls.crt: PUBLIC KEY
	// tls.key: EC PRIVATE KEY
	// cluster-1 true ES256
}

// During a rotation tls.crt carries another public key after the signing
// key's, so that kube-apiserver accepts the tokens of both.
func ExampleSecretOptions_verifyKeys() {
	current, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	next, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	secret, err := clusterapi.NewSecret("cluster-1", current, clusterapi.SecretOptions{
		Namespace:  "fleet",
		VerifyKeys: []crypto.PublicKey{next.Public()},
	})
	if err != nil {
		log.Fatal(err)
	}
	pair, err := clusterapi.ReadSecret(secret)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range pair.Keys {
		fmt.Println(k.Algorithm, k.KeyID == pair.KeyID)
	}
	// Output:
	// ES256 true
	// ES384 false
}

// A key that cannot leave its HSM or KMS cannot be handed out this way.
func ExampleErrKeyNotExportable() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	inStore := struct{ crypto.Signer }{key} // stands for an HSM or KMS key
	_, err := clusterapi.NewSecret("cluster-1", inStore, clusterapi.SecretOptions{})
	fmt.Println(errors.Is(err, clusterapi.ErrKeyNotExportable))
	// Output: true
}
