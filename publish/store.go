package publish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Object is one document to write.
type Object struct {
	// Name is the object's path relative to the location's prefix, slash
	// separated (".well-known/openid-configuration").
	Name string
	// Data is the document's bytes, written as they are.
	Data []byte
	// ContentType is the Content-Type the store serves it with.
	ContentType string
	// CacheControl is the Cache-Control the store serves it with.
	CacheControl string
}

// Access says whether the cloud serves a location to anonymous readers.
type Access int

// What a preflight learned about anonymous reads.
const (
	// AccessUnknown: the store cannot tell without a write (a bucket
	// policy or IAM policy it could not read, a directory).
	AccessUnknown Access = iota
	// AccessPublic: the cloud serves the objects to anyone.
	AccessPublic
	// AccessPrivate: the cloud refuses anonymous readers.
	AccessPrivate
)

// Preflight is what a store learned before anything was written.
type Preflight struct {
	Access Access
	// AccessFix says how to make the location publicly readable, in the
	// words of the cloud's command-line tool.
	AccessFix string
}

// Version names what a store held of an object when it was read, for
// [Store.PutIf]: its ETag (Azure, S3), its generation (GCS), a digest of
// its bytes (a directory). The zero Version is an absent object's.
type Version string

// Store is a place documents are published to. Every method takes the
// caller's context, bounds what it reads, and fails with an [*Error].
// Implementations are safe for concurrent use.
type Store interface {
	// Location returns where the store writes.
	Location() Location
	// PublicURL returns the https URL at which the cloud itself serves
	// the location's prefix to anonymous readers, or "" when it has none
	// (a directory).
	PublicURL() string
	// Preflight checks the credentials and the bucket or container
	// without writing anything.
	Preflight(ctx context.Context) (Preflight, error)
	// Get reads an object of at most max bytes (more is an error of kind
	// ErrStore) and the Version the store holds of it; an absent object
	// is an error of kind ErrNotFound.
	Get(ctx context.Context, name string, max int64) ([]byte, Version, error)
	// Put writes an object with one request, replacing any object of
	// that name; a reader sees the old object or the new one, never a
	// part.
	Put(ctx context.Context, o Object) error
	// PutIf writes an object as Put does, only if the store still holds
	// version v of it (the zero Version: only if there is none), in the
	// same request: an object written since v was read is left as it
	// is, and the failure is of kind ErrChanged.
	PutIf(ctx context.Context, o Object, v Version) error
}

// Opener opens the store of a location of one kind; the packages
// publish/azblob, publish/s3 and publish/gcs each have one (Open).
type Opener func(ctx context.Context, loc Location, cfg Config) (Store, error)

// Config is what opening a store takes beyond its location. Its zero value
// opens directories only, with the system's roots.
type Config struct {
	// Openers open the stores of each kind but Dir (which this package
	// opens): {S3: s3.Open, ...}. A kind without one fails with
	// ErrNoOpener.
	Openers map[Kind]Opener
	// HTTPClient sends the store's requests; nil means a client with
	// RequestTimeout (the AWS SDK's own for S3, which adds
	// AWS_CA_BUNDLE's roots).
	HTTPClient *http.Client
	// RootCAs, when HTTPClient is nil, are the roots every client of the
	// store trusts in place of the system's (a TLS-inspecting proxy's CA
	// beside them); nil means the system's.
	RootCAs *x509.CertPool
	// Getenv reads the environment; nil means os.Getenv. (The SDKs read
	// their own variables from the process environment.)
	Getenv func(string) string
}

// RequestTimeout bounds each request to a store when the caller's client
// has no timeout of its own, and each request of [Publish] and a
// [Rotation] step.
const RequestTimeout = 30 * time.Second

// Client returns HTTPClient, or a new client with RequestTimeout that
// trusts RootCAs.
func (c Config) Client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	if c.RootCAs == nil {
		return &http.Client{Timeout: RequestTimeout}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	c.Trust(tr)
	return &http.Client{Transport: tr, Timeout: RequestTimeout}
}

// Trust makes tr trust RootCAs (a copy: an SDK may add to it); nothing
// when RootCAs is nil.
func (c Config) Trust(tr *http.Transport) {
	if c.RootCAs == nil {
		return
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tr.TLSClientConfig.RootCAs = c.RootCAs.Clone()
}

// Env returns the variable name of the environment, through Getenv.
func (c Config) Env(name string) string {
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return os.Getenv(name)
}

// Open returns the store of a location: a directory, or a store of
// cfg.Openers. It checks what it can without a request; Preflight checks
// the rest.
func Open(ctx context.Context, loc Location, cfg Config) (Store, error) {
	if loc.Kind == Dir {
		return &dirStore{loc: loc}, nil
	}
	if open := cfg.Openers[loc.Kind]; open != nil {
		return open(ctx, loc, cfg)
	}
	if loc.Kind == "" {
		return nil, &Error{Kind: ErrLocation, What: "location " + quote(RedactURL(loc.Raw)) + " has no store", Fix: "give the location as ParseLocation reads it"}
	}
	return nil, &Error{Kind: ErrNoOpener, What: "no store of kind " + string(loc.Kind) + " for location " + quote(RedactURL(loc.Raw)), Fix: "give Config.Openers the kind's Open"}
}

// ReadObject reads a whole object of at most max bytes from r, for a
// [Store]'s Get; what names it in errors. Over the limit is an *Error of
// kind ErrStore.
func ReadObject(r io.Reader, what string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, &Error{Kind: ErrStore, What: "reading " + what, Err: err}
	}
	if int64(len(data)) > max {
		return nil, &Error{Kind: ErrStore, What: fmt.Sprintf("%s is over %d bytes", what, max), Fix: "delete the object, or publish elsewhere"}
	}
	return data, nil
}
