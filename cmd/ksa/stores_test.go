package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rogpeppe/go-internal/testscript"
)

// azuriteAccount and azuriteKey are Azurite's well-known development
// account (published by Microsoft; no secret).
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteInstall is how the Azure scripts' emulator is installed.
const azuriteInstall = "npm install -g azurite@3.37.0"

// TestPublishScripts runs the workflows of testdata/publish: the issuer
// published to Azure Blob (Azurite), S3 (gofakes3), GCS (fake-gcs-server)
// and a directory, each store behind a proxy that injects faults, and
// served over https on loopback by a front that reads the store as an
// anonymous reader does; and the cloud registrations. Azurite is a
// separate program: without it the Azure scripts skip, saying how to
// install it, and fail under CI=1.
func TestPublishScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/publish",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GORACE", raceOptions())
			for _, dir := range []string{"keys"} {
				if err := copyDir(filepath.Join("testdata", dir), filepath.Join(env.WorkDir, dir)); err != nil {
					return err
				}
			}
			env.Values[storesKey{}] = &scriptStores{byKind: map[string]*testStore{}}
			// No cloud's metadata service is ever asked for credentials.
			env.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			env.Setenv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential")
			env.Setenv("GCE_METADATA_HOST", "127.0.0.1:9")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond != "azurite" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := azuriteBin()
			if err != nil && os.Getenv("CI") != "" {
				return false, fmt.Errorf("azurite-blob not found (CI is set): install it with %s", azuriteInstall)
			}
			return err == nil, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":       cmdServe,
			"runprinted":  cmdRunPrinted,
			"store":       cmdStore,
			"bucket":      cmdBucket,
			"storefault":  cmdStoreFault,
			"front":       cmdFront,
			"runcli":      cmdRunCLI,
			"example":     cmdExample,
			"entra":       cmdEntra,
			"storewrites": cmdStoreWrites,
		},
	})
}

type storesKey struct{}

// scriptStores are the stores a script started.
type scriptStores struct {
	mu     sync.Mutex
	byKind map[string]*testStore
}

func stores(ts *testscript.TestScript) *scriptStores {
	return ts.Value(storesKey{}).(*scriptStores)
}

func (s *scriptStores) get(ts *testscript.TestScript, kind string) *testStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.byKind[kind]
	if !ok {
		ts.Fatalf("no %s store: run 'store %s' first", kind, kind)
	}
	return st
}

// testStore is one emulator behind its fault proxy.
type testStore struct {
	kind string
	// endpoint is the proxy's URL, which ksa is given.
	endpoint string
	// direct is the emulator's own URL, which the front reads.
	direct string
	s3     *s3mem.Backend
	gcs    *fakestorage.Server

	mu sync.Mutex
	// failPut makes writes of objects whose name ends with it fail (500).
	failPut string
	// deny makes every request fail as a refused permission (403).
	deny bool
	// denyBucket refuses requests about the bucket itself (its
	// properties, policy or IAM), as a publisher's role may.
	denyBucket bool
	// writes counts the write requests (PUT, POST) that reached the
	// proxy since the last storewrites.
	writes int
}

// faults is the proxy's middleware: the faults set by storefault, and
// for S3 the Cache-Control gofakes3 does not keep, carried as metadata.
func (st *testStore) faults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		write := r.Method == http.MethodPut || r.Method == http.MethodPost
		if write {
			st.writes++
		}
		failPut, deny := st.failPut, st.deny || (st.denyBucket && st.aboutBucket(r))
		st.mu.Unlock()
		path := r.URL.Path
		if st.kind == "gcs" {
			path = r.URL.Query().Get("name") // multipart uploads name the object in the query
		}
		switch {
		case deny:
			st.refuse(w)
			return
		case write && failPut != "" && strings.HasSuffix(path, failPut):
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return
		}
		if st.kind == "s3" && r.Method == http.MethodPut && r.Header.Get("Cache-Control") != "" {
			r.Header.Set("X-Amz-Meta-Cache-Control", r.Header.Get("Cache-Control"))
		}
		next.ServeHTTP(w, r)
	})
}

// bucketRequest matches the requests about a bucket itself: S3's /BUCKET,
// GCS's /storage/v1/b/BUCKET[/iam], Azure's /ACCOUNT/CONTAINER.
var bucketRequest = map[string]*regexp.Regexp{
	"s3":    regexp.MustCompile(`^/[^/]+/?$`),
	"gcs":   regexp.MustCompile(`^/storage/v1/b/[^/]+(/iam)?/?$`),
	"azure": regexp.MustCompile(`^/[^/]+/[^/]+/?$`),
}

// aboutBucket reports whether r is about the bucket itself.
func (st *testStore) aboutBucket(r *http.Request) bool {
	return bucketRequest[st.kind].MatchString(r.URL.Path)
}

// refuse answers as each store refuses a permission.
func (st *testStore) refuse(w http.ResponseWriter) {
	switch st.kind {
	case "azure":
		w.Header().Set("x-ms-error-code", "AuthorizationPermissionMismatch")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationPermissionMismatch</Code><Message>This request is not authorized to perform this operation using this permission.</Message></Error>`)
	case "s3":
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error":{"code":403,"message":"ksa-test does not have storage.objects.create access","errors":[{"reason":"forbidden","message":"forbidden"}]}}`)
	}
}

// store starts an emulator and points ksa's environment at it; with
// -tls, ksa reaches it over https, its proxy's certificate signed by the
// CA in $WORK/KIND-store-ca.pem, which ksa does not trust by itself:
//
//	store [-tls] azure|s3|gcs
func cmdStore(ts *testscript.TestScript, neg bool, args []string) {
	useTLS := len(args) > 0 && args[0] == "-tls"
	if useTLS {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: store [-tls] azure|s3|gcs")
	}
	st := &testStore{kind: args[0]}
	// serve starts the proxy ksa is given, over https with -tls.
	serve := func(h http.Handler) *httptest.Server {
		if !useTLS {
			srv := httptest.NewServer(h)
			ts.Defer(srv.Close)
			return srv
		}
		// A certificate of its own (httptest's is the same for every
		// server), for 127.0.0.1.
		cert, ca := loopbackCert(ts)
		srv := httptest.NewUnstartedServer(h)
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		srv.StartTLS()
		ts.Defer(srv.Close)
		ts.Check(os.WriteFile(ts.MkAbs(st.kind+"-store-ca.pem"), ca, 0o644))
		return srv
	}
	switch st.kind {
	case "s3":
		st.s3 = s3mem.New()
		faker := gofakes3.New(st.s3, gofakes3.WithAutoBucket(false))
		srv := serve(st.faults(faker.Server()))
		st.endpoint, st.direct = srv.URL, srv.URL
		ts.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
		ts.Setenv("AWS_ACCESS_KEY_ID", "ksa-test")
		ts.Setenv("AWS_SECRET_ACCESS_KEY", "ksa-test-secret")
		ts.Setenv("AWS_REGION", "us-east-1")
	case "gcs":
		gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Writer: io.Discard})
		ts.Check(err)
		st.gcs = gcs
		srv := serve(st.faults(gcs.HTTPHandler()))
		st.endpoint, st.direct = srv.URL, srv.URL
		host := strings.TrimPrefix(srv.URL, "http://") // an https URL is kept whole
		ts.Setenv("STORAGE_EMULATOR_HOST", host)
	case "azure":
		direct := startAzurite(ts, ts.Defer, ts.MkAbs(".azurite"))
		target, err := url.Parse(direct)
		ts.Check(err)
		srv := serve(st.faults(httputil.NewSingleHostReverseProxy(target)))
		st.endpoint, st.direct = srv.URL, direct
		ts.Setenv("AZURE_STORAGE_CONNECTION_STRING", azuriteConnectionString(srv.URL))
	default:
		ts.Fatalf("unknown store %q", st.kind)
	}
	s := stores(ts)
	s.mu.Lock()
	s.byKind[st.kind] = st
	s.mu.Unlock()
}

// loopbackCert makes a self-signed certificate for 127.0.0.1, its own CA,
// and returns it with its PEM.
func loopbackCert(ts testHost) (tls.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ts.Fatalf("generating a key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa test store"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		ts.Fatalf("making a certificate: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func azuriteConnectionString(endpoint string) string {
	proto, _, _ := strings.Cut(endpoint, "://")
	return "DefaultEndpointsProtocol=" + proto + ";AccountName=" + azuriteAccount + ";AccountKey=" + azuriteKey + ";BlobEndpoint=" + endpoint + "/" + azuriteAccount + ";"
}

// azuriteListening is Azurite's line once it serves.
var azuriteListening = regexp.MustCompile(`successfully listens on (http://\S+)`)

// azuriteBin finds azurite-blob: $KSA_AZURITE_BLOB, or on $PATH.
func azuriteBin() (string, error) {
	if bin := os.Getenv("KSA_AZURITE_BLOB"); bin != "" {
		return bin, nil
	}
	return exec.LookPath("azurite-blob")
}

// testHost is what starting an emulator needs of a script or a test.
type testHost interface {
	Fatalf(format string, args ...any)
}

// startAzurite runs azurite-blob on a free loopback port, in memory, in
// dir, and returns its URL once it listens; cleanup stops it.
func startAzurite(ts testHost, cleanup func(func()), dir string) string {
	bin, err := azuriteBin()
	if err != nil {
		ts.Fatalf("azurite-blob not found: install it with %s (scripts start with [!azurite] skip)", azuriteInstall)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence",
		"--skipApiVersionCheck", "--disableTelemetry")
	cmd.Dir = dir
	check := func(err error) {
		if err != nil {
			ts.Fatalf("starting azurite-blob: %v", err)
		}
	}
	check(os.MkdirAll(cmd.Dir, 0o755))
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = cmd.Stdout
	check(cmd.Start())
	cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	var lines []string
	var linesMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			linesMu.Lock()
			lines = append(lines, sc.Text())
			linesMu.Unlock()
			if m := azuriteListening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	timer := time.NewTimer(60 * time.Second)
	defer timer.Stop()
	select {
	case u, ok := <-found:
		if !ok {
			linesMu.Lock()
			defer linesMu.Unlock()
			ts.Fatalf("azurite-blob exited before it listened:\n%s", strings.Join(lines, "\n"))
		}
		return u
	case <-timer.C:
		ts.Fatalf("azurite-blob did not listen within a minute")
	}
	return ""
}

// bucket creates a bucket (an Azure container), publicly readable unless
// -private:
//
//	bucket azure|s3|gcs NAME [-private]
func cmdBucket(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[2] != "-private") {
		ts.Fatalf("usage: bucket azure|s3|gcs NAME [-private]")
	}
	st := stores(ts).get(ts, args[0])
	name := args[1]
	private := len(args) == 3
	switch st.kind {
	case "s3":
		ts.Check(st.s3.CreateBucket(name))
	case "gcs":
		st.gcs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
	case "azure":
		c, err := azblob.NewClientFromConnectionString(azuriteConnectionString(st.direct), nil)
		ts.Check(err)
		opts := &azblob.CreateContainerOptions{}
		if !private {
			access := container.PublicAccessTypeBlob
			opts.Access = &access
		}
		_, err = c.CreateContainer(context.Background(), name, opts)
		ts.Check(err)
	}
}

// storefault sets the store's fault:
//
//	storefault KIND fail-put NAME   writes of NAME fail (500)
//	storefault KIND deny            every request is refused (403)
//	storefault KIND deny-bucket     requests about the bucket itself are refused
//	storefault KIND off
func cmdStoreFault(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: storefault KIND fail-put NAME|deny|deny-bucket|off")
	}
	st := stores(ts).get(ts, args[0])
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case args[1] == "fail-put" && len(args) == 3:
		st.failPut = args[2]
	case args[1] == "deny" && len(args) == 2:
		st.deny = true
	case args[1] == "deny-bucket" && len(args) == 2:
		st.denyBucket = true
	case args[1] == "off" && len(args) == 2:
		st.failPut, st.deny, st.denyBucket = "", false, false
	default:
		ts.Fatalf("usage: storefault KIND fail-put NAME|deny|deny-bucket|off")
	}
}

// storewrites checks how many write requests reached the store since
// the last check, and starts counting again (reset: without checking):
//
//	storewrites KIND N|reset
func cmdStoreWrites(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: storewrites KIND N|reset")
	}
	st := stores(ts).get(ts, args[0])
	want := -1
	if args[1] != "reset" {
		var err error
		want, err = strconv.Atoi(args[1])
		ts.Check(err)
	}
	st.mu.Lock()
	got := st.writes
	st.writes = 0
	st.mu.Unlock()
	if want >= 0 && got != want {
		ts.Fatalf("%d write requests reached the %s store, want %d", got, st.kind, want)
	}
}

// front serves a bucket over https on loopback as the cloud serves it to
// anonymous readers, until the script ends:
//
//	front [-private] VAR KIND BUCKET
//
// GET /NAME answers with object NAME of BUCKET, its Content-Type and
// Cache-Control as stored; Azure objects are read anonymously from
// Azurite, which refuses a private container. -private refuses every
// request, as the cloud refuses anonymous readers of a private bucket. $VAR is the front's URL and
// $WORK/VAR-ca.pem its CA certificate.
func cmdFront(ts *testscript.TestScript, neg bool, args []string) {
	private := len(args) > 0 && args[0] == "-private"
	if private {
		args = args[1:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: front [-private] VAR KIND BUCKET")
	}
	st := stores(ts).get(ts, args[1])
	bucket := args[2]
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if private {
			st.refuse(w)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "read only", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		body, ctype, cache, status, err := st.read(r.Context(), bucket, name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if status != http.StatusOK {
			http.Error(w, http.StatusText(status), status)
			return
		}
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		if cache != "" {
			w.Header().Set("Cache-Control", cache)
		}
		w.Write(body)
	}))
	ts.Defer(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+"-ca.pem"), ca, 0o644))
	ts.Setenv(args[0], srv.URL)
}

// read reads an object as an anonymous reader of the cloud would.
func (st *testStore) read(ctx context.Context, bucket, name string) (body []byte, ctype, cache string, status int, err error) {
	switch st.kind {
	case "s3":
		obj, err := st.s3.GetObject(bucket, name, nil)
		if err != nil {
			if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) || gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchBucket) {
				return nil, "", "", http.StatusNotFound, nil
			}
			return nil, "", "", 0, err
		}
		defer obj.Contents.Close()
		body, err := io.ReadAll(obj.Contents)
		return body, obj.Metadata["Content-Type"], obj.Metadata["X-Amz-Meta-Cache-Control"], http.StatusOK, err
	case "gcs":
		obj, err := st.gcs.GetObject(bucket, name)
		if err != nil {
			return nil, "", "", http.StatusNotFound, nil
		}
		return obj.Content, obj.ContentType, obj.CacheControl, http.StatusOK, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.direct+"/"+azuriteAccount+"/"+bucket+"/"+name, nil)
	if err != nil {
		return nil, "", "", 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", "", 0, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", "", 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", "", resp.StatusCode, nil
	}
	return body, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), http.StatusOK, nil
}
