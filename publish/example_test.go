package publish_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/publishtest"
	"github.com/ksa-go/ksa/rotation"
)

// Publish an issuer to a directory a web server serves, then check it as
// Entra ID, AWS and Google fetch it.
func ExamplePublish() {
	dir, _ := os.MkdirTemp("", "site")
	defer os.RemoveAll(dir)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := jwks.NewKey(k.Public())
	issuer := srv.URL + "/cluster-1"
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: oidc.JWKSURL(issuer)}, []jwks.Key{key})
	if err != nil {
		fmt.Println(err)
		return
	}
	loc, _ := publish.ParseLocation(filepath.Join(dir, "cluster-1"))
	store, _ := publish.Open(context.Background(), loc, publish.Config{}) // a directory; Config.Openers for clouds
	res, err := publish.Publish(context.Background(), store, &publish.Site{Discovery: docs.Discovery, KeySet: docs.JWKS}, publish.PublishOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range res.Objects {
		fmt.Println("wrote", o.Name, o.ContentType)
	}
	// A directory's web server sets its own headers: the check says so.
	rep := publish.Check(context.Background(), issuer, publish.CheckOptions{HTTPClient: srv.Client()})
	for _, f := range rep.Findings {
		fmt.Println(f.Severity, f.Code)
	}
	// Output:
	// wrote openid/v1/jwks application/jwk-set+json
	// wrote .well-known/openid-configuration application/json
	// warning content-type
	// warning cache-control
	// warning discovery-no-rs256
	// warning content-type
	// warning cache-control
	// error no-rs256
}

// One step of a scheduled rotation, as a controller's reconcile or a
// CronJob runs it: the ring file and the store are in memory here (a
// Secret or ConfigMap, a bucket), the key a file.
func ExampleRotation_Step() {
	dir, _ := os.MkdirTemp("", "keys")
	defer os.RemoveAll(dir)
	newKey := func(ctx context.Context, r publish.KeyRequest) (string, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		path := filepath.Join(dir, "sa-"+r.Now.Format("20060102150405")+".key")
		return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	}
	first, _ := newKey(context.Background(), publish.KeyRequest{Now: time.Unix(0, 0)})
	ring := publishtest.NewRing(&extsigner.RingFile{MaxTokenLifetime: time.Hour,
		Keys: []extsigner.RingFileKey{{Key: first, Primary: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}}})
	// The store publishes the issuer already.
	cfg, _ := ring.File().Open(context.Background(), nil)
	issuer := "https://oidc.example.com/cluster-1"
	docs, _ := oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: oidc.JWKSURL(issuer)}, []jwks.Key{cfg.Schedule[0].Key})
	store := publishtest.NewStore("cluster-1")
	_, _ = publish.Publish(context.Background(), store, &publish.Site{Discovery: docs.Discovery, KeySet: docs.JWKS}, publish.PublishOptions{})

	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	rot, err := publish.NewRotation(publish.RotationConfig{Ring: ring, Store: store, NewKey: newKey,
		Cadence: rotation.Cadence{Every: 30 * 24 * time.Hour, Delay: time.Minute, Propagation: 2 * time.Hour},
		Now:     func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, at := range []time.Duration{0, time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour} {
		now = time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).Add(at)
		res, err := rot.Step(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		a := res.Action
		fmt.Printf("+%v %s: %s", at, a.Stage, a.Kind)
		if a.Kind == rotation.Wait {
			fmt.Printf(" until +%v (%s)", a.At.Sub(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)), a.For)
		}
		fmt.Println()
	}
	// Output:
	// +0s steady: publish-next
	// +1h0m0s next-published: wait until +2h0m0s (propagation)
	// +2h0m0s next-published: sign-next
	// +3h0m0s next-signs: wait until +3h3m1s (tokens)
	// +4h0m0s next-signs: retire-old
}
