//go:build !ksa_nogcs

package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"cloud.google.com/go/iam"
	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// gcsEmulatorEnv points the storage client at an emulator, without
// credentials.
const gcsEmulatorEnv = "STORAGE_EMULATOR_HOST"

const gcsCredFix = "give application default credentials: gcloud auth application-default login, GOOGLE_APPLICATION_CREDENTIALS (a key or a workload identity federation configuration file), or the metadata server of a Google Cloud runtime"

// gcsStore publishes to a Google Cloud Storage bucket.
type gcsStore struct {
	loc    Location
	bucket *storage.BucketHandle
}

func openGCS(ctx context.Context, loc Location, cfg Config) (Store, error) {
	// Reads go through the JSON API, as writes do: an emulator
	// (STORAGE_EMULATOR_HOST) answers the XML API's reads "not found",
	// which would hide what a bucket publishes already.
	opts := []option.ClientOption{storage.WithJSONReads()}
	if cfg.HTTPClient != nil || cfg.RootCAs != nil {
		hc, err := gcsClient(cfg)
		if err != nil {
			return nil, &Error{Kind: ErrNoCredentials, What: "no Google Cloud credentials", Fix: gcsCredFix, Err: summed(firstLine(err.Error()), err)}
		}
		opts = append(opts, option.WithHTTPClient(hc))
	}
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, &Error{Kind: ErrNoCredentials, What: "no Google Cloud credentials", Fix: gcsCredFix, Err: summed(firstLine(err.Error()), err)}
	}
	return &gcsStore{loc: loc, bucket: c.Bucket(loc.Bucket)}, nil
}

// gcsClient is the configured client (or one trusting RootCAs) for the
// storage client: as it is for an emulator (which takes no credentials),
// else under application default credentials found through it (a client
// given as it is would send no credentials).
func gcsClient(cfg Config) (*http.Client, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	client := cfg.client()
	if getenv(gcsEmulatorEnv) != "" {
		return client, nil
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc, err := httptransport.NewClient(&httptransport.Options{
		BaseRoundTripper: base,
		DetectOpts: &credentials.DetectOptions{
			Scopes: []string{storage.ScopeFullControl, "https://www.googleapis.com/auth/cloud-platform"},
			Client: client,
		},
	})
	if err != nil {
		return nil, err
	}
	hc.Timeout = client.Timeout
	return hc, nil
}

func (s *gcsStore) Location() Location { return s.loc }

func (s *gcsStore) PublicURL() string {
	u := "https://storage.googleapis.com/" + s.loc.Bucket
	if s.loc.Prefix != "" {
		u += "/" + s.loc.Prefix
	}
	return u
}

func (s *gcsStore) Preflight(ctx context.Context) (Preflight, error) {
	fix := fmt.Sprintf("let anyone read the bucket: gcloud storage buckets add-iam-policy-binding gs://%s --member=allUsers --role=roles/storage.objectViewer (with public access prevention off)", s.loc.Bucket)
	if _, err := s.bucket.Attrs(ctx); err != nil {
		err = s.error(err, "reading bucket "+quote(s.loc.Bucket))
		if errors.Is(err, ErrPermissionDenied) {
			// storage.buckets.get is not in roles/storage.objectUser,
			// which suffices to publish: its writes and reads tell.
			return Preflight{Access: AccessUnknown, AccessFix: fix}, nil
		}
		return Preflight{}, err
	}
	policy, err := s.bucket.IAM().Policy(ctx)
	if err != nil {
		return Preflight{Access: AccessUnknown, AccessFix: fix}, nil
	}
	for _, role := range []string{"roles/storage.objectViewer", "roles/storage.legacyObjectReader", "roles/storage.legacyBucketReader"} {
		if policy.HasRole("allUsers", iam.RoleName(role)) {
			return Preflight{Access: AccessPublic, AccessFix: fix}, nil
		}
	}
	return Preflight{Access: AccessPrivate, AccessFix: fix}, nil
}

func (s *gcsStore) Get(ctx context.Context, name string, max int64) ([]byte, error) {
	data, _, err := s.GetVersion(ctx, name, max)
	return data, err
}

// GetVersion reads the object; its version is its generation.
func (s *gcsStore) GetVersion(ctx context.Context, name string, max int64) ([]byte, Version, error) {
	r, err := s.bucket.Object(s.loc.Key(name)).NewReader(ctx)
	if err != nil {
		return nil, "", s.error(err, "reading "+s.loc.URL(name))
	}
	defer r.Close()
	data, err := readObject(r, s.loc.URL(name), max, "delete the object, or publish elsewhere")
	if err != nil {
		return nil, "", err
	}
	return data, Version(strconv.FormatInt(r.Attrs.Generation, 10)), nil
}

// Put writes the object in one request (no resumable upload: ChunkSize 0).
func (s *gcsStore) Put(ctx context.Context, o Object) error {
	return s.put(ctx, o, s.bucket.Object(s.loc.Key(o.Name)))
}

// PutIf writes with ifGenerationMatch: the generation read, or 0 for an
// object read absent.
func (s *gcsStore) PutIf(ctx context.Context, o Object, v Version) error {
	cond := storage.Conditions{DoesNotExist: true}
	if v != "" {
		gen, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || gen <= 0 {
			return &Error{Kind: ErrStore, What: "writing " + s.loc.URL(o.Name) + ": version " + quote(string(v)) + " is no generation", Fix: "give PutIf the Version GetVersion returned"}
		}
		cond = storage.Conditions{GenerationMatch: gen}
	}
	return s.put(ctx, o, s.bucket.Object(s.loc.Key(o.Name)).If(cond))
}

func (s *gcsStore) put(ctx context.Context, o Object, obj *storage.ObjectHandle) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0
	w.ContentType = o.ContentType
	w.CacheControl = o.CacheControl
	if _, err := w.Write(o.Data); err != nil {
		cancel()
		_ = w.Close()
		return s.error(err, "writing "+s.loc.URL(o.Name))
	}
	if err := w.Close(); err != nil {
		return s.error(err, "writing "+s.loc.URL(o.Name))
	}
	return nil
}

// error sorts a GCS failure into its kind, with the fix.
func (s *gcsStore) error(err error, what string) error {
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return &Error{Kind: ErrNotFound, What: what + ": no such bucket",
			Fix: "create it: gcloud storage buckets create gs://" + s.loc.Bucket + " --uniform-bucket-level-access", Err: summed("404", err)}
	case errors.Is(err, storage.ErrObjectNotExist):
		return &Error{Kind: ErrNotFound, What: what + ": not found", Err: summed("404", err)}
	}
	var ae *auth.Error
	if errors.As(err, &ae) || strings.Contains(err.Error(), "credentials") {
		return &Error{Kind: ErrNoCredentials, What: what + ": no usable Google Cloud credentials", Fix: gcsCredFix, Err: summed(firstLine(err.Error()), err)}
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return &Error{Kind: ErrStore, What: what, Fix: "check the network and " + gcsEmulatorEnv, Err: summed(firstLine(err.Error()), err)}
	}
	msg := firstLine(ge.Message)
	if msg == "" {
		msg = http.StatusText(ge.Code)
	}
	short := summed(fmt.Sprintf("%d %s", ge.Code, msg), err)
	switch ge.Code {
	case http.StatusPreconditionFailed:
		return &Error{Kind: ErrChanged, What: what + ": it changed since it was read", Err: short}
	case http.StatusUnauthorized:
		return &Error{Kind: ErrNoCredentials, What: what + ": the credentials were refused", Fix: gcsCredFix, Err: short}
	case http.StatusForbidden:
		return &Error{Kind: ErrPermissionDenied, What: what + ": permission denied",
			Fix: fmt.Sprintf("grant the identity roles/storage.objectUser on the bucket: gcloud storage buckets add-iam-policy-binding gs://%s --member=PRINCIPAL --role=roles/storage.objectUser", s.loc.Bucket), Err: short}
	case http.StatusNotFound:
		return &Error{Kind: ErrNotFound, What: what + ": not found", Err: short}
	}
	return &Error{Kind: ErrStore, What: what, Fix: "try again; if it persists, see the store's status", Err: short}
}
