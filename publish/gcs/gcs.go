// Package gcs is the publish.Store of a Google Cloud Storage bucket
// (gs://BUCKET/PREFIX), over cloud.google.com/go/storage: a leaf package,
// so that only its importers build the SDK. Give its Open to
// publish.Config.Openers:
//
//	cfg := publish.Config{Openers: map[publish.Kind]publish.Opener{publish.GCS: gcs.Open}}
//
// Credentials are Google's application default credentials;
// STORAGE_EMULATOR_HOST points it at an emulator, without credentials.
// Versions are generations; PutIf sends ifGenerationMatch (0 for an object
// read absent). Errors are *publish.Error with fixes in the gcloud CLI's
// words.
package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/httptransport"
	"cloud.google.com/go/iam"
	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/internal/sdkerr"
)

// gcsEmulatorEnv points the storage client at an emulator, without
// credentials.
const gcsEmulatorEnv = "STORAGE_EMULATOR_HOST"

const gcsCredFix = "give application default credentials: gcloud auth application-default login, GOOGLE_APPLICATION_CREDENTIALS (a key or a workload identity federation configuration file), or the metadata server of a Google Cloud runtime"

// gcsStore publishes to a Google Cloud Storage bucket.
type gcsStore struct {
	loc    publish.Location
	bucket *storage.BucketHandle
}

// Open returns the store of a GCS location, as publish.Opener.
func Open(ctx context.Context, loc publish.Location, cfg publish.Config) (publish.Store, error) {
	if loc.Kind != publish.GCS {
		return nil, &publish.Error{Kind: publish.ErrLocation, What: "location " + strconv.Quote(publish.RedactURL(loc.Raw)) + " is not of kind " + string(publish.GCS)}
	}
	// Reads go through the JSON API, as writes do: an emulator
	// (STORAGE_EMULATOR_HOST) answers the XML API's reads "not found",
	// which would hide what a bucket publishes already.
	opts := []option.ClientOption{storage.WithJSONReads()}
	if cfg.HTTPClient != nil || cfg.RootCAs != nil {
		hc, err := gcsClient(cfg)
		if err != nil {
			return nil, &publish.Error{Kind: publish.ErrNoCredentials, What: "no Google Cloud credentials", Fix: gcsCredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
		}
		opts = append(opts, option.WithHTTPClient(hc))
	}
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrNoCredentials, What: "no Google Cloud credentials", Fix: gcsCredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	return &gcsStore{loc: loc, bucket: c.Bucket(loc.Bucket)}, nil
}

// gcsClient is the configured client (or one trusting RootCAs) for the
// storage client: as it is for an emulator (which takes no credentials),
// else under application default credentials found through it (a client
// given as it is would send no credentials).
func gcsClient(cfg publish.Config) (*http.Client, error) {
	client := cfg.Client()
	if cfg.Env(gcsEmulatorEnv) != "" {
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

func (s *gcsStore) Location() publish.Location { return s.loc }

func (s *gcsStore) PublicURL() string {
	return s.loc.PublicURL()
}

func (s *gcsStore) Preflight(ctx context.Context) (publish.Preflight, error) {
	fix := fmt.Sprintf("let anyone read the bucket: gcloud storage buckets add-iam-policy-binding gs://%s --member=allUsers --role=roles/storage.objectViewer (with public access prevention off)", s.loc.Bucket)
	if _, err := s.bucket.Attrs(ctx); err != nil {
		err = s.error(err, "reading bucket "+strconv.Quote(s.loc.Bucket))
		if errors.Is(err, publish.ErrPermissionDenied) {
			// storage.buckets.get is not in roles/storage.objectUser,
			// which suffices to publish: its writes and reads tell.
			return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
		}
		return publish.Preflight{}, err
	}
	policy, err := s.bucket.IAM().Policy(ctx)
	if err != nil {
		return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
	}
	for _, role := range []string{"roles/storage.objectViewer", "roles/storage.legacyObjectReader", "roles/storage.legacyBucketReader"} {
		if policy.HasRole("allUsers", iam.RoleName(role)) {
			return publish.Preflight{Access: publish.AccessPublic, AccessFix: fix}, nil
		}
	}
	return publish.Preflight{Access: publish.AccessPrivate, AccessFix: fix}, nil
}

// Get reads the object; its version is its generation.
func (s *gcsStore) Get(ctx context.Context, name string, max int64) ([]byte, publish.Version, error) {
	r, err := s.bucket.Object(s.loc.Key(name)).NewReader(ctx)
	if err != nil {
		return nil, "", s.error(err, "reading "+s.loc.URL(name))
	}
	defer r.Close()
	data, err := publish.ReadObject(r, s.loc.URL(name), max)
	if err != nil {
		return nil, "", err
	}
	return data, publish.Version(strconv.FormatInt(r.Attrs.Generation, 10)), nil
}

// Put writes the object in one request (no resumable upload: ChunkSize 0).
func (s *gcsStore) Put(ctx context.Context, o publish.Object) error {
	return s.put(ctx, o, s.bucket.Object(s.loc.Key(o.Name)))
}

// PutIf writes with ifGenerationMatch: the generation read, or 0 for an
// object read absent.
func (s *gcsStore) PutIf(ctx context.Context, o publish.Object, v publish.Version) error {
	cond := storage.Conditions{DoesNotExist: true}
	if v != "" {
		gen, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || gen <= 0 {
			return &publish.Error{Kind: publish.ErrStore, What: "writing " + s.loc.URL(o.Name) + ": version " + strconv.Quote(string(v)) + " is no generation", Fix: "give PutIf the publish.Version GetVersion returned"}
		}
		cond = storage.Conditions{GenerationMatch: gen}
	}
	return s.put(ctx, o, s.bucket.Object(s.loc.Key(o.Name)).If(cond))
}

func (s *gcsStore) put(ctx context.Context, o publish.Object, obj *storage.ObjectHandle) error {
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
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": no such bucket",
			Fix: "create it: gcloud storage buckets create gs://" + s.loc.Bucket + " --uniform-bucket-level-access", Err: sdkerr.Summed("404", err)}
	case errors.Is(err, storage.ErrObjectNotExist):
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": not found", Err: sdkerr.Summed("404", err)}
	}
	var ae *auth.Error
	if errors.As(err, &ae) || strings.Contains(err.Error(), "credentials") {
		return &publish.Error{Kind: publish.ErrNoCredentials, What: what + ": no usable Google Cloud credentials", Fix: gcsCredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "check the network and " + gcsEmulatorEnv, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	msg := sdkerr.FirstLine(ge.Message)
	if msg == "" {
		msg = http.StatusText(ge.Code)
	}
	short := sdkerr.Summed(fmt.Sprintf("%d %s", ge.Code, msg), err)
	switch ge.Code {
	case http.StatusPreconditionFailed:
		return &publish.Error{Kind: publish.ErrChanged, What: what + ": it changed since it was read", Err: short}
	case http.StatusUnauthorized:
		return &publish.Error{Kind: publish.ErrNoCredentials, What: what + ": the credentials were refused", Fix: gcsCredFix, Err: short}
	case http.StatusForbidden:
		return &publish.Error{Kind: publish.ErrPermissionDenied, What: what + ": permission denied",
			Fix: fmt.Sprintf("grant the identity roles/storage.objectUser on the bucket: gcloud storage buckets add-iam-policy-binding gs://%s --member=PRINCIPAL --role=roles/storage.objectUser", s.loc.Bucket), Err: short}
	case http.StatusNotFound:
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": not found", Err: short}
	}
	return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "try again; if it persists, see the store's status", Err: short}
}
