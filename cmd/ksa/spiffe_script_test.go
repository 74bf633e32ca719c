package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// kubeletKey holds a script's *kubeletSigner in its values.
type kubeletKey struct{}

// kubeletSigner is the test signer of a script's kubelet command.
type kubeletSigner struct{ ca *podcerttest.Signer }

// cmdKubelet writes a pod certificate and its signer's trust bundle into
// a directory as the kubelet mounts them (credentialbundle.pem, ca.pem),
// from a test signer kept for the script:
//
//	kubelet DIR NAMESPACE POD SERVICEACCOUNT
//
// Run again, it writes a refreshed certificate in one atomic swap.
func cmdKubelet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: kubelet DIR NAMESPACE POD SERVICEACCOUNT")
	}
	k := ts.Value(kubeletKey{}).(*kubeletSigner)
	if k.ca == nil {
		var err error
		k.ca, err = podcerttest.NewSigner(podcerttest.Config{})
		ts.Check(err)
	}
	ca := k.ca
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	mount, err := podcerttest.NewMount(dir)
	ts.Check(err)
	bundle, err := ca.Issue(podcerttest.Pod{Namespace: args[1], Name: args[2], ServiceAccount: args[3]})
	ts.Check(err)
	ts.Check(mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}))
}

// cmdSVID fetches the X509-SVID from a Workload API socket as a
// workload's client does, waiting for the server to listen and, with
// DIR, for the certificate the kubelet command last mounted there (at
// most a minute: a guard, not a measure), and prints its SPIFFE ID, the
// length of its chain and of its trust bundle:
//
//	svid SOCKET [DIR]
func cmdSVID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: svid SOCKET [DIR]")
	}
	var want []byte
	if len(args) == 2 {
		cred, err := podcert.ParseBundle([]byte(ts.ReadFile(filepath.Join(args[1], "credentialbundle.pem"))))
		ts.Check(err)
		want = cred.Certificate.Leaf.Raw
	}
	conn, err := grpc.NewClient("unix://"+ts.MkAbs(args[0]), grpc.WithTransportCredentials(insecure.NewCredentials()))
	ts.Check(err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := workload.NewSpiffeWorkloadAPIClient(conn).FetchX509SVID(
		metadata.AppendToOutgoingContext(ctx, workloadapi.SecurityHeader, "true"), &workload.X509SVIDRequest{}, grpc.WaitForReady(true))
	ts.Check(err)
	for {
		resp, err := stream.Recv()
		ts.Check(err)
		svid := resp.Svids[0]
		chain, err := x509.ParseCertificates(svid.X509Svid)
		ts.Check(err)
		roots, err := x509.ParseCertificates(svid.Bundle)
		ts.Check(err)
		if want == nil || bytes.Equal(chain[0].Raw, want) {
			fmt.Fprintf(ts.Stdout(), "%s chain %d roots %d\n", svid.SpiffeId, len(chain), len(roots))
			return
		}
	}
}
