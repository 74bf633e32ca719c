package publish_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/publish"
)

// TestFileRing: a ring file is written in place through its link, keeping
// its mode, only while it holds the bytes read; its lock keeps a second
// writer out, naming the first.
func TestFileRing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := writeKey(t, dir, "sa.key")
	f := &extsigner.RingFile{Keys: []extsigner.RingFileKey{{Key: key, Primary: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "data"), 0o755))
	target := filepath.Join(dir, "data", "ring.json")
	require.NoError(t, os.WriteFile(target, f.AppendJSON(nil), 0o640))
	link := filepath.Join(dir, "ring.json")
	require.NoError(t, os.Symlink(filepath.Join("data", "ring.json"), link))

	ring := publish.NewFileRing(link, publish.FileRingConfig{})
	unlock, err := ring.Lock("pid 1 on host a")
	require.NoError(t, err)
	_, err = publish.NewFileRing(link, publish.FileRingConfig{}).Lock("pid 2 on host b")
	require.ErrorIs(t, err, publish.ErrLocked)
	var le *publish.LockError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "pid 1 on host a", le.Holder)
	assert.Equal(t, target+publish.LockSuffix, le.Path, "the lock is beside the link's target")

	got, v, err := ring.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, f.Keys, got.Keys)
	got.RefreshHint = time.Minute

	// Another writer first: refused, the file left as it is.
	other := append(f.AppendJSON(nil), '\n')
	require.NoError(t, os.WriteFile(target, other, 0o640))
	require.ErrorIs(t, ring.Write(ctx, got, v), publish.ErrChanged)
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, string(other), string(data))

	// On the version read: written through the link, mode kept.
	_, v, err = ring.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, ring.Write(ctx, got, v))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "still a link")
	fi, err = os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	again, _, err := ring.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Minute, again.RefreshHint)

	require.NoError(t, unlock())
	unlock, err = publish.NewFileRing(link, publish.FileRingConfig{}).Lock("pid 2 on host b")
	require.NoError(t, err, "released")
	require.NoError(t, unlock())

	_, _, err = publish.NewFileRing(filepath.Join(dir, "missing.json"), publish.FileRingConfig{}).Read(ctx)
	assert.ErrorIs(t, err, publish.ErrNotFound)
}
