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
	kinds := []error{ErrLocation, ErrNoOpener, ErrNoCredentials, ErrNotFound, ErrPermissionDenied, ErrChanged, ErrStore}
	for _, kind := range kinds {
		t.Run(kind.Error(), func(t *testing.T) {
			err := error(&Error{Kind: kind, What: "writing s3://b/k", Fix: "fix it", Err: cause})
			for _, other := range kinds {
				assert.Equal(t, other == kind, errors.Is(err, other), "errors.Is(%v)", other)
			}
			assert.ErrorIs(t, err, cause, "the SDK's error stays reachable")
			assert.Equal(t, "publish: writing s3://b/k: 403 AccessDenied", err.Error(), "the fix is not part of the message")
		})
	}
	assert.Equal(t, "publish: what", (&Error{Kind: ErrStore, What: "what"}).Error())
}

func TestOpenWithoutOpener(t *testing.T) {
	loc, err := ParseLocation("s3://b/p")
	require.NoError(t, err)
	_, err = Open(context.Background(), loc, Config{})
	assert.ErrorIs(t, err, ErrNoOpener)
	opened := false
	_, err = Open(context.Background(), loc, Config{Openers: map[Kind]Opener{S3: func(context.Context, Location, Config) (Store, error) {
		opened = true
		return nil, nil
	}}})
	require.NoError(t, err)
	assert.True(t, opened, "the kind's opener opens it")
}

func TestDirStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "site")
	s, err := Open(ctx, Location{Kind: Dir, Path: dir, Raw: dir}, Config{})
	require.NoError(t, err)
	assert.Empty(t, s.PublicURL())
	_, err = s.Preflight(ctx)
	require.NoError(t, err, "a missing directory is made on the first write")

	_, _, err = s.Get(ctx, "openid/v1/jwks", 100)
	assert.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, s.Put(ctx, Object{Name: "openid/v1/jwks", Data: []byte(`{"keys":[]}`)}))
	got, _, err := s.Get(ctx, "openid/v1/jwks", 100)
	require.NoError(t, err)
	assert.Equal(t, `{"keys":[]}`, string(got))
	fi, err := os.Stat(filepath.Join(dir, "openid", "v1", "jwks"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm(), "anyone may read a published document")

	_, _, err = s.Get(ctx, "openid/v1/jwks", 5)
	assert.ErrorIs(t, err, ErrStore, "over the limit")
	got, _, err = s.Get(ctx, "openid/v1/jwks", int64(len(`{"keys":[]}`)))
	require.NoError(t, err, "exactly at the limit")
	assert.Equal(t, `{"keys":[]}`, string(got))
	_, _, err = s.Get(ctx, "openid/v1/jwks", int64(len(`{"keys":[]}`))-1)
	assert.ErrorIs(t, err, ErrStore, "one byte over the limit")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	s, err = Open(ctx, Location{Kind: Dir, Path: file, Raw: file}, Config{})
	require.NoError(t, err)
	_, err = s.Preflight(ctx)
	assert.ErrorIs(t, err, ErrLocation)
}
