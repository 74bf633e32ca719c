package signertest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/extsigner/signertest"
)

// Run the harness against ksa's own signer, on a socket in a temporary
// directory.
func Example() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys: []extsigner.RingKey{{Signer: key, Role: extsigner.RolePrimary}},
	})
	if err != nil {
		panic(err)
	}
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "signer")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "signer.sock")
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Stop()

	report, err := signertest.Run(context.Background(), signertest.Config{Address: sock})
	if err != nil {
		panic(err)
	}
	fmt.Println("checks:", len(report.Results))
	fmt.Println("kube-apiserver's failing:", len(report.Failed(signertest.LevelKubernetes)))
	fmt.Println("stricter failing:", len(report.Failed(signertest.LevelStrict)))
	// Output:
	// checks: 16
	// kube-apiserver's failing: 0
	// stricter failing: 0
}
