// Command spiffe-mtls is a test workload of the node harness: an app that
// gets its X.509-SVID from the SPIFFE Workload API (go-spiffe's
// X509Source, at $SPIFFE_ENDPOINT_SOCKET, which ksa spiffe serve serves
// as a sidecar) and does mutual TLS with go-spiffe's spiffetls, each side
// authorizing the other's SPIFFE ID (-peer).
//
//	spiffe-mtls -serve :8443 -peer spiffe://cluster.local/ns/NS/sa/default
//	spiffe-mtls -dial 127.0.0.1:8443 -peer spiffe://cluster.local/ns/NS/sa/default -n 20
//
// The server answers every connection's line with the client's SPIFFE
// ID, and prints one JSON line per connection, {"peer": ID} or
// {"failed": ERROR}, until SIGTERM. The client makes -n connections, one
// after the other, and prints {"ok": N, "failed": M, "peer": ID,
// "errors": [...]}; it exits 1 when any failed. TestChartPodcert builds
// it (Start does not) and reads the lines from the containers' logs.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/spiffetls"
	"github.com/spiffe/go-spiffe/v2/spiffetls/tlsconfig"
	"github.com/spiffe/go-spiffe/v2/workloadapi"
)

// maxLine bounds a line read from a peer.
const maxLine = 4096

// result is the client's report.
type result struct {
	OK     int      `json:"ok"`
	Failed int      `json:"failed"`
	Peer   string   `json:"peer,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

func main() {
	serve := flag.String("serve", "", "listen on this address and answer every client")
	dial := flag.String("dial", "", "connect to this address -n times")
	peer := flag.String("peer", "", "the SPIFFE ID the other side must have")
	n := flag.Int("n", 10, "connections the client makes")
	flag.Parse()
	id, err := spiffeid.FromString(*peer)
	if err != nil {
		fatal(fmt.Errorf("-peer: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	source, err := workloadapi.NewX509Source(ctx)
	if err != nil {
		fatal(fmt.Errorf("the Workload API: %w", err))
	}
	defer source.Close()
	auth := tlsconfig.AuthorizeID(id)
	switch {
	case *serve != "":
		err = runServer(ctx, *serve, auth, source)
	case *dial != "":
		err = runClient(ctx, *dial, *n, auth, source)
	default:
		err = errors.New("give -serve or -dial")
	}
	if err != nil {
		fatal(err)
	}
}

// runServer answers connections on addr until ctx is done.
func runServer(ctx context.Context, addr string, auth tlsconfig.Authorizer, source *workloadapi.X509Source) error {
	ln, err := spiffetls.ListenWithMode(ctx, "tcp", addr, spiffetls.MTLSServerWithSource(auth, source))
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	enc := json.NewEncoder(os.Stdout)
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReaderSize(c, maxLine)
			_, err := r.ReadString('\n')
			var got spiffeid.ID
			if err == nil {
				got, err = spiffetls.PeerIDFromConn(c)
			}
			if err == nil {
				_, err = fmt.Fprintln(c, got.String())
			}
			if err != nil {
				_ = enc.Encode(map[string]string{"failed": err.Error()})
				return
			}
			_ = enc.Encode(map[string]string{"peer": got.String()})
		}()
	}
}

// runClient makes n connections to addr and reports them.
func runClient(ctx context.Context, addr string, n int, auth tlsconfig.Authorizer, source *workloadapi.X509Source) error {
	var res result
	for range n {
		peer, err := roundTrip(ctx, addr, auth, source)
		if err != nil {
			res.Failed++
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		res.OK++
		res.Peer = peer
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return err
	}
	if res.Failed > 0 {
		os.Exit(1)
	}
	return nil
}

// roundTrip connects once, sends a line and reads the server's answer;
// it returns the server's SPIFFE ID.
func roundTrip(ctx context.Context, addr string, auth tlsconfig.Authorizer, source *workloadapi.X509Source) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := spiffetls.DialWithMode(ctx, "tcp", addr, spiffetls.MTLSClientWithSource(auth, source))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := fmt.Fprintln(c, "hello"); err != nil {
		return "", err
	}
	if _, err := bufio.NewReaderSize(c, maxLine).ReadString('\n'); err != nil {
		return "", err
	}
	id, err := spiffetls.PeerIDFromConn(c)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// fatal prints err and exits 2.
func fatal(err error) {
	fmt.Fprintln(os.Stderr, "spiffe-mtls:", err)
	os.Exit(2)
}
