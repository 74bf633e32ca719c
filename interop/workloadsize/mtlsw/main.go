// Command mtlsw is a pod that serves mutual TLS with its pod certificate
// and learns its peer's service account: the workload side of podcert,
// nothing else. TestWorkloadLinksNoKubernetes builds it and checks that it
// links no k8s.io package.
package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/ksa-go/ksa/podcert"
)

func main() {
	src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: "/var/run/podcert/credentialbundle.pem"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bundle, _ := os.ReadFile("/var/run/trust/bundle.pem")
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: bundle})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Addr: ":8443", TLSConfig: peers.ServerConfig(src, nil)}
	fmt.Println(srv.ListenAndServeTLS("", ""))
}
