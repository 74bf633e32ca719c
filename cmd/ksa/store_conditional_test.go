package main

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	storeopeners "github.com/ksa-go/ksa/cmd/ksa/internal/stores"
	"github.com/ksa-go/ksa/publish"
)

// TestStoreConditionalWrite holds every store's PutIf to what the
// emulators the scripts use honour (gofakes3: If-Match and
// If-None-Match on PUT; fake-gcs-server: ifGenerationMatch; Azurite:
// If-Match and If-None-Match; a directory: its lock and digest): a write
// on the version read goes through, a write after another writer's is
// refused with ErrChanged and leaves the other writer's object, and a
// write of an object read absent is refused once it exists.
func TestStoreConditionalWrite(t *testing.T) {
	ctx := context.Background()
	obj := func(data string) publish.Object {
		return publish.Object{Name: "openid/v1/jwks", Data: []byte(data), ContentType: "application/jwk-set+json", CacheControl: "public, max-age=3600"}
	}
	for _, kind := range []string{"s3", "gcs", "azure", "dir"} {
		t.Run(kind, func(t *testing.T) {
			to, cfg := conditionalStore(t, kind)
			loc, err := publish.ParseLocation(to)
			require.NoError(t, err)
			cfg.Openers = storeopeners.Openers()
			ours, err := publish.Open(ctx, loc, cfg)
			require.NoError(t, err)
			// The other writer, through a store of its own.
			theirs, err := publish.Open(ctx, loc, cfg)
			require.NoError(t, err)

			_, v, err := ours.Get(ctx, "openid/v1/jwks", 1<<10)
			require.ErrorIs(t, err, publish.ErrNotFound)
			assert.Empty(t, v, "an absent object's version is the zero Version")
			require.NoError(t, ours.PutIf(ctx, obj("one"), v), "absent, as read")
			err = ours.PutIf(ctx, obj("two"), v)
			require.ErrorIs(t, err, publish.ErrChanged, "read absent, present now")
			var pe *publish.Error
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, pe.What, "openid/v1/jwks: it changed since it was read")

			data, v, err := ours.Get(ctx, "openid/v1/jwks", 1<<10)
			require.NoError(t, err)
			assert.Equal(t, "one", string(data))
			assert.NotEmpty(t, v)
			require.NoError(t, theirs.Put(ctx, obj("theirs")))
			require.ErrorIs(t, ours.PutIf(ctx, obj("ours"), v), publish.ErrChanged, "written by another since it was read")
			data, _, err = ours.Get(ctx, "openid/v1/jwks", 1<<10)
			require.NoError(t, err)
			assert.Equal(t, "theirs", string(data), "the other writer's object stays")

			_, v, err = ours.Get(ctx, "openid/v1/jwks", 1<<10)
			require.NoError(t, err)
			require.NoError(t, ours.PutIf(ctx, obj("ours"), v), "the version read")
			data, _, err = theirs.Get(ctx, "openid/v1/jwks", 1<<10)
			require.NoError(t, err)
			assert.Equal(t, "ours", string(data))
		})
	}
}

// conditionalStore starts the store of kind with a bucket "oidc" and
// returns the location and the configuration that open it.
func conditionalStore(t *testing.T, kind string) (string, publish.Config) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	switch kind {
	case "s3":
		backend := s3mem.New()
		require.NoError(t, backend.CreateBucket("oidc"))
		srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithAutoBucket(false)).Server())
		t.Cleanup(srv.Close)
		t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
		t.Setenv("AWS_ACCESS_KEY_ID", "ksa-test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "ksa-test-secret")
		t.Setenv("AWS_REGION", "us-east-1")
		t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "credentials"))
		return "s3://oidc/cluster-1", publish.Config{}
	case "gcs":
		gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Writer: io.Discard})
		require.NoError(t, err)
		gcs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "oidc"})
		srv := httptest.NewServer(gcs.HTTPHandler())
		t.Cleanup(srv.Close)
		t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL, "http://"))
		return "gs://oidc/cluster-1", publish.Config{}
	case "azure":
		if _, err := azuriteBin(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("azurite-blob not found (CI is set): install it with %s", azuriteInstall)
			}
			t.Skipf("azurite-blob not found: install it with %s", azuriteInstall)
		}
		direct := startAzurite(t, t.Cleanup, t.TempDir())
		cs := azuriteConnectionString(direct)
		c, err := azblob.NewClientFromConnectionString(cs, nil)
		require.NoError(t, err)
		_, err = c.CreateContainer(context.Background(), "oidc", nil)
		require.NoError(t, err)
		return "https://" + azuriteAccount + ".blob.core.windows.net/oidc/cluster-1", publish.Config{Getenv: func(name string) string {
			if name == "AZURE_STORAGE_CONNECTION_STRING" {
				return cs
			}
			return ""
		}}
	}
	return filepath.Join(t.TempDir(), "www"), publish.Config{}
}
