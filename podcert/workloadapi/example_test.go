package workloadapi_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// Serve a pod's mounted certificate on the Workload API's socket; a
// client's stream receives it, then the kubelet's refresh.
func Example() {
	dir, err := os.MkdirTemp("", "spiffe")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// The pod's volume, as the kubelet mounts it (a test signer here).
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	if err != nil {
		panic(err)
	}
	mount, err := podcerttest.NewMount(dir)
	if err != nil {
		panic(err)
	}
	refresh := func() {
		bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
		if err != nil {
			panic(err)
		}
		if err := mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}); err != nil {
			panic(err)
		}
	}
	refresh()

	// The sidecar.
	srv, err := workloadapi.NewServer(workloadapi.Config{
		Credential:   podcert.SourceConfig{BundlePath: mount.Path("credentialbundle.pem")},
		TrustBundles: []workloadapi.TrustBundle{{TrustDomain: "cluster.local", Path: mount.Path("ca.pem")}},
	})
	if err != nil {
		panic(err)
	}
	sock := "unix://" + filepath.Join(dir, "api.sock") // SPIFFE_ENDPOINT_SOCKET
	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: sock})
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Watch(ctx)

	// A workload's client: every request carries the security header.
	conn, err := grpc.NewClient(sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	stream, err := workload.NewSpiffeWorkloadAPIClient(conn).FetchX509SVID(
		metadata.AppendToOutgoingContext(ctx, workloadapi.SecurityHeader, "true"), &workload.X509SVIDRequest{})
	if err != nil {
		panic(err)
	}
	var serials []string
	for i := range 2 {
		resp, err := stream.Recv()
		if err != nil {
			panic(err)
		}
		svid := resp.Svids[0]
		certs, _ := x509.ParseCertificates(svid.X509Svid)
		roots, _ := x509.ParseCertificates(svid.Bundle)
		fmt.Println(svid.SpiffeId, len(certs), "certificate(s),", len(roots), "root(s)")
		serials = append(serials, certs[0].SerialNumber.String())
		if i == 0 {
			refresh() // the kubelet's refresh: a file event, an answer
		}
	}
	fmt.Println("rotated:", serials[0] != serials[1])
	// Output:
	// spiffe://cluster.local/ns/shop/sa/cart 1 certificate(s), 1 root(s)
	// spiffe://cluster.local/ns/shop/sa/cart 1 certificate(s), 1 root(s)
	// rotated: true
}
