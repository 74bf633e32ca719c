package keystore_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// Load the service-account signing key of a cluster, as kube-apiserver
// reads --service-account-signing-key-file, and the key set it publishes.
func ExampleLoadSigningKeyFile() {
	dir, err := os.MkdirTemp("", "keystore")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	path := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		log.Fatal(err)
	}

	signer, err := keystore.LoadSigningKeyFile(path)
	if err != nil {
		log.Fatal(err)
	}
	pub, err := jwks.NewKey(signer.Public())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pub.Algorithm)

	_, err = keystore.LoadSigningKeyFile(filepath.Join(dir, "missing.key"))
	fmt.Println(errors.Is(err, keystore.ErrKeyFile), errors.Is(err, fs.ErrNotExist))
	// Output:
	// ES256
	// true true
}

// A program passes one Opener to whatever opens keys by reference: here
// PEM files only.
func ExampleFiles() {
	dir, err := os.MkdirTemp("", "keystore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		panic(err)
	}
	var opener keystore.Opener = keystore.Files{}
	signer, err := opener.Open(context.Background(), path)
	if err != nil {
		panic(err)
	}
	fmt.Println(signer.Public().(*ecdsa.PublicKey).Equal(&key.PublicKey))
	// Output: true
}

// Parse the key references an operator writes in flags: a file, a key on
// an HSM. A PIN written into a reference is refused, and never shown.
func ExampleParseRef() {
	for _, s := range []string{
		"/etc/kubernetes/pki/sa.key",
		"pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a0b;object=sa?pin-source=/run/secrets/pin",
		"pkcs11:token=ksa;id=0a0b?pin-value=1234",
	} {
		ref, err := keystore.ParseRef(s)
		if err != nil {
			var re *keystore.RefError
			fmt.Println(errors.As(err, &re), re.Ref)
			continue
		}
		if ref.Scheme() == keystore.SchemeFile {
			fmt.Println(ref.Scheme(), ref.Path())
			continue
		}
		fmt.Println(ref.Scheme(), ref.Attr("token"), fmt.Sprintf("%x", ref.ObjectID()))
	}
	// Output:
	// file /etc/kubernetes/pki/sa.key
	// pkcs11 ksa 0a0b
	// true pkcs11:token=ksa;id=0a0b?pin-value=REDACTED
}

// A program opens every key through one Openers: PEM files itself, each
// key store through the store set for its scheme (here none, so a key
// on an HSM is refused, naming the package that opens it).
func ExampleOpeners() {
	dir, err := os.MkdirTemp("", "keystore-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		panic(err)
	}

	keys := keystore.Openers{}
	defer keys.Close()
	signer, err := keys.Open(context.Background(), path)
	if err != nil {
		panic(err)
	}
	fmt.Println(signer.Public().(*ecdsa.PublicKey).Equal(&key.PublicKey))
	_, err = keys.Open(context.Background(), "pkcs11:token=ksa;id=0a0b?pin-source=/run/secrets/pin")
	var e *keystore.StoreError
	fmt.Println(errors.Is(err, keystore.ErrUnsupportedStore), errors.As(err, &e))
	fmt.Println(e.Fix)
	// Output:
	// true
	// true true
	// give it an opener of them (package github.com/ksa-go/ksa/keystore/pkcs11)
}
