// Package testkeys holds the keys ksa's tests share: Kubernetes' own test
// keys from k8s.io/kubernetes/pkg/serviceaccount (whose key IDs Kubernetes
// promises never to change) and keys generated once per test binary.
package testkeys

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"fmt"
	"sync"
)

//go:embed testdata/*.pem
var files embed.FS

// Key IDs Kubernetes' tests pin for its RSA and EC test keys.
const (
	K8sRSAKeyID = "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
	K8sECKeyID  = "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc"
	// K8sRSAThumbprint is the RFC 7638 thumbprint of the same RSA key.
	K8sRSAThumbprint = "-VkBv7ckVLGbPlrdyjF01LitmrAB_z87v-oICeALHRw"
)

// PEM returns a test key file's bytes.
func PEM(name string) []byte {
	b, err := files.ReadFile("testdata/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

func parse(name string) any {
	block, _ := pem.Decode(PEM(name))
	if block == nil {
		panic("testkeys: no PEM in " + name)
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	default:
		err = fmt.Errorf("unexpected block %s", block.Type)
	}
	if err != nil {
		panic(fmt.Sprintf("testkeys: %s: %v", name, err))
	}
	return key
}

// K8sRSA is Kubernetes' 2048-bit RSA test key (kid K8sRSAKeyID).
func K8sRSA() *rsa.PrivateKey { return parse("k8s-rsa.key.pem").(*rsa.PrivateKey) }

// K8sEC is Kubernetes' P-256 test key (kid K8sECKeyID).
func K8sEC() *ecdsa.PrivateKey { return parse("k8s-ec.key.pem").(*ecdsa.PrivateKey) }

// K8sOtherRSAPublic is the unrelated RSA public key of Kubernetes' tests.
func K8sOtherRSAPublic() *rsa.PublicKey { return parse("k8s-other-rsa.pub.pem").(*rsa.PublicKey) }

var generated = struct {
	sync.Mutex
	keys map[string]crypto.Signer
}{keys: map[string]crypto.Signer{}}

// Generated returns a key generated once per test binary and name: "rsa2048",
// "rsa3072", "rsa1024", "p256", "p384", "p521", "p224" or "ed25519"; any
// other name with a suffix (e.g. "p256-b") makes a distinct key of that kind.
func Generated(name string) crypto.Signer {
	generated.Lock()
	defer generated.Unlock()
	if k, ok := generated.keys[name]; ok {
		return k
	}
	kind := name
	for i := range name {
		if name[i] == '-' {
			kind = name[:i]
			break
		}
	}
	var k crypto.Signer
	var err error
	switch kind {
	case "rsa1024":
		k, err = rsa.GenerateKey(rand.Reader, 1024)
	case "rsa2048":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case "rsa3072":
		k, err = rsa.GenerateKey(rand.Reader, 3072)
	case "p224":
		k, err = ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	case "p256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "p384":
		k, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "p521":
		k, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ed25519":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	default:
		panic("testkeys: unknown key kind " + kind)
	}
	if err != nil {
		panic(err)
	}
	generated.keys[name] = k
	return k
}
