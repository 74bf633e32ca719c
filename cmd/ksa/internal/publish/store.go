package publish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
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

// Store is a place documents are published to.
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
	// Get reads an object; an absent object is an *Error of kind
	// ErrNotFound. At most max bytes are read; more is an error.
	Get(ctx context.Context, name string, max int64) ([]byte, error)
	// Put writes an object with one request, replacing any object of
	// that name; a reader sees the old object or the new one, never a
	// part.
	Put(ctx context.Context, o Object) error
	// GetVersion reads an object as Get does, with the Version the
	// store holds of it.
	GetVersion(ctx context.Context, name string, max int64) ([]byte, Version, error)
	// PutIf writes an object as Put does, only if the store still holds
	// version v of it (the zero Version: only if there is none), in the
	// same request: an object written since v was read is left as it
	// is, and the failure is an *Error of kind ErrChanged.
	PutIf(ctx context.Context, o Object, v Version) error
}

// Version names what a store held of an object when it was read, for
// [Store.PutIf]: its ETag (Azure, S3), its generation (GCS), a digest of
// its bytes (a directory). The zero Version is an absent object's.
type Version string

// Config is what opening a store takes beyond its location.
type Config struct {
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
// has no timeout of its own.
const RequestTimeout = 30 * time.Second

// client returns the configured client or the default one, trusting
// RootCAs.
func (c Config) client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	if c.RootCAs == nil {
		return &http.Client{Timeout: RequestTimeout}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	c.trust(tr)
	return &http.Client{Transport: tr, Timeout: RequestTimeout}
}

// trust makes tr trust RootCAs (a copy: an SDK may add to it).
func (c Config) trust(tr *http.Transport) {
	if c.RootCAs == nil {
		return
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tr.TLSClientConfig.RootCAs = c.RootCAs.Clone()
}

// Open returns the store of a location. It checks what it can without a
// request; Preflight checks the rest.
func Open(ctx context.Context, loc Location, cfg Config) (Store, error) {
	switch loc.Kind {
	case Azure:
		return openAzure(ctx, loc, cfg)
	case S3:
		return openS3(ctx, loc, cfg)
	case GCS:
		return openGCS(ctx, loc, cfg)
	case Dir:
		return &dirStore{loc: loc}, nil
	}
	return nil, &Error{Kind: ErrLocation, What: "location " + quote(loc.Raw) + " has no store", Fix: "give --to s3://, gs://, https://ACCOUNT.blob.core.windows.net/ or a directory"}
}

// readObject reads a whole object of at most max bytes from r; what names
// it in errors, and fix says what to do with one over the limit.
func readObject(r io.Reader, what string, max int64, fix string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, &Error{Kind: ErrStore, What: "reading " + what, Err: err}
	}
	if int64(len(data)) > max {
		return nil, &Error{Kind: ErrStore, What: fmt.Sprintf("%s is over %d bytes", what, max), Fix: fix}
	}
	return data, nil
}
