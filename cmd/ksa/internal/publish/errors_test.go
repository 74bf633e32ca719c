package publish

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorMatchesItsKindOnly(t *testing.T) {
	cause := errors.New("403 AccessDenied")
	kinds := []error{ErrLocation, ErrNoCredentials, ErrNotFound, ErrPermissionDenied, ErrNotPublic, ErrNotBuilt, ErrChanged, ErrStore}
	for _, kind := range kinds {
		t.Run(kind.Error(), func(t *testing.T) {
			err := error(&Error{Kind: kind, What: "writing s3://b/k", Fix: "fix it", Err: summed("short", cause)})
			for _, other := range kinds {
				assert.Equal(t, other == kind, errors.Is(err, other), "errors.Is(%v)", other)
			}
			assert.ErrorIs(t, err, cause, "the SDK's error stays reachable")
			assert.Equal(t, "writing s3://b/k: short", err.Error(), "the fix is not part of the message")
		})
	}
	assert.Equal(t, "what", (&Error{Kind: ErrStore, What: "what"}).Error())
}

func TestNotBuiltNamesTheTag(t *testing.T) {
	err := notBuilt(Location{Kind: S3, Raw: "s3://b"}, "ksa_nos3")
	assert.ErrorIs(t, err, ErrNotBuilt)
	assert.Equal(t, "this ksa was built without s3 support (-tags ksa_nos3)", err.Error())
}

func TestFirstLine(t *testing.T) {
	assert.Equal(t, "DefaultAzureCredential: failed", firstLine("  DefaultAzureCredential: failed\nEnvironmentCredential: ...\n"))
	assert.Equal(t, "", firstLine(""))
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "site")
	s, err := Open(ctx, Location{Kind: Dir, Path: dir, Raw: dir}, Config{})
	require.NoError(t, err)
	assert.Empty(t, s.PublicURL())
	_, err = s.Preflight(ctx)
	require.NoError(t, err, "a missing directory is made on the first write")

	_, err = s.Get(ctx, "openid/v1/jwks", 100)
	assert.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, s.Put(ctx, Object{Name: "openid/v1/jwks", Data: []byte(`{"keys":[]}`)}))
	got, err := s.Get(ctx, "openid/v1/jwks", 100)
	require.NoError(t, err)
	assert.Equal(t, `{"keys":[]}`, string(got))
	fi, err := os.Stat(filepath.Join(dir, "openid", "v1", "jwks"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm(), "anyone may read a published document")

	_, err = s.Get(ctx, "openid/v1/jwks", 5)
	assert.ErrorIs(t, err, ErrStore, "over the limit")
	got, err = s.Get(ctx, "openid/v1/jwks", int64(len(`{"keys":[]}`)))
	require.NoError(t, err, "exactly at the limit")
	assert.Equal(t, `{"keys":[]}`, string(got))
	_, err = s.Get(ctx, "openid/v1/jwks", int64(len(`{"keys":[]}`))-1)
	assert.ErrorIs(t, err, ErrStore, "one byte over the limit")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	s, err = Open(ctx, Location{Kind: Dir, Path: file, Raw: file}, Config{})
	require.NoError(t, err)
	_, err = s.Preflight(ctx)
	assert.ErrorIs(t, err, ErrLocation)
}
