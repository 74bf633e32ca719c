package grpcserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Serve a ring on a Unix socket and sign as kube-apiserver does: send the
// claims, join header, claims and signature; the token validates with the
// keys FetchKeys publishes.
func Example() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // or a KMS key
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys:             []extsigner.RingKey{{Signer: key, Role: extsigner.RolePrimary}},
		MaxTokenLifetime: 24 * time.Hour,
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
	sock := filepath.Join(dir, "signer.sock") // --service-account-signing-endpoint
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.GracefulStop()

	// What kube-apiserver does.
	conn, err := grpc.NewClient("passthrough:///signer",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := externaljwtv1.NewExternalJWTSignerClient(conn)
	ctx := context.Background()
	md, err := client.Metadata(ctx, &externaljwtv1.MetadataRequest{})
	if err != nil {
		panic(err)
	}
	fmt.Println("max token lifetime:", time.Duration(md.MaxTokenExpirationSeconds)*time.Second)

	now := time.Now().Truncate(time.Second)
	claims := &tokens.Claims{
		Issuer: "https://kubernetes.default.svc.cluster.local", Subject: "system:serviceaccount:billing:api",
		Audience: []string{"vault"}, IssuedAt: now, NotBefore: now, Expiry: now.Add(time.Hour),
		Kubernetes: &tokens.KubernetesClaims{Namespace: "billing", ServiceAccount: ksa.ObjectRef{Name: "api", UID: "0d5a2f0e"}},
	}
	payload := base64.RawURLEncoding.EncodeToString(claims.AppendJSON(nil))
	resp, err := client.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: payload})
	if err != nil {
		panic(err)
	}
	token := resp.Header + "." + payload + "." + resp.Signature

	// A relying party with the published keys.
	src, _ := jwks.NewStaticSource(ring.KeySet().Keys...)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{claims.Issuer}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true,
	})
	if err != nil {
		panic(err)
	}
	res, err := v.Validate(ctx, token)
	if err != nil {
		panic(err)
	}
	fmt.Println("valid:", res.UserInfo().Username)

	_, err = client.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: "bm90IGpzb24"}) // "not json"
	fmt.Println("not JSON:", status.Code(err))
	// Output:
	// max token lifetime: 24h0m0s
	// valid: system:serviceaccount:billing:api
	// not JSON: InvalidArgument
}
