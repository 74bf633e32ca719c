package atomicdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteNeverFollowsLinks: another writer of the directory (a
// container sharing the volume) plants a symbolic link to a directory of
// its choice at each name the writer uses, at the moment the writer uses
// it: nothing is ever written, created, removed or chmod'ed outside the
// directory, and the files written keep their modes.
func TestWriteNeverFollowsLinks(t *testing.T) {
	key := map[string]File{"key.pem": {Data: []byte("secret"), Mode: 0o600}, "ca.pem": {Data: []byte("public"), Mode: 0o644}}
	// payloadOf returns the newest payload directory of dir, other than
	// the ones of before.
	newPayload := func(t *testing.T, dir string, before []string) string {
		t.Helper()
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), payloadPrefix) && !slices.Contains(before, e.Name()) {
				return e.Name()
			}
		}
		t.Fatal("no new payload directory")
		return ""
	}
	for _, tc := range []struct {
		name string
		// at is the step when plant runs; "" before Write.
		at      string
		plant   func(t *testing.T, dir, outside string, before []string)
		wantErr bool
	}{
		{name: "the directory itself is a link", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Rename(dir, dir+".moved"))
			require.NoError(t, os.Symlink(outside, dir))
		}, wantErr: true},
		{name: "the directory swapped for a link once opened", at: "opened", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Rename(dir, dir+".moved"))
			require.NoError(t, os.Symlink(outside, dir))
		}},
		{name: "the new payload directory swapped for a link", at: "payload", plant: func(t *testing.T, dir, outside string, before []string) {
			p := newPayload(t, dir, before)
			require.NoError(t, os.Rename(filepath.Join(dir, p), filepath.Join(dir, "moved")))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, p)))
		}},
		{name: "..data_tmp planted", at: "written", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "theirs"), filepath.Join(dir, tmpLink)))
		}},
		{name: "..data swapped for a link", at: "linked", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Remove(filepath.Join(dir, DataLink)))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, DataLink)))
		}},
		{name: "a file's name planted", at: "swapped", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "key.pem")))
			require.NoError(t, os.Symlink(filepath.Join(outside, "theirs"), filepath.Join(dir, "key.pem")))
		}},
		{name: "an earlier payload directory is a link", plant: func(t *testing.T, dir, outside string, _ []string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, payloadPrefix+"old")))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "creds")
			require.NoError(t, Write(dir, 0o755, key), "a first write")
			outside := filepath.Join(base, "outside")
			require.NoError(t, os.Mkdir(outside, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "theirs"), []byte("theirs"), 0o640))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var before []string
			for _, e := range entries {
				before = append(before, e.Name())
			}
			if tc.at == "" {
				tc.plant(t, dir, outside, before)
			}
			err = write(dir, 0o755, key, func(step string) {
				if step == tc.at {
					tc.plant(t, dir, outside, before)
				}
			})
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}

			fi, err := os.Stat(outside)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "the outside directory is not chmod'ed")
			entries, err = os.ReadDir(outside)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing is created or removed outside")
			data, err := os.ReadFile(filepath.Join(outside, "theirs"))
			require.NoError(t, err)
			assert.Equal(t, "theirs", string(data))
			fi, err = os.Stat(filepath.Join(outside, "theirs"))
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm())
			// Whatever was written is ours, with its mode, under base.
			require.NoError(t, filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.Name() == "key.pem" && d.Type().IsRegular() {
					fi, err := d.Info()
					require.NoError(t, err)
					assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), p)
				}
				return nil
			}))
		})
	}
}

// TestWriteCreatesTheDirectory: a directory that does not exist (an
// emptyDir's subdirectory on the pod's first start) is created with the
// mode of the write's directories, whatever the umask; its parent must
// exist.
func TestWriteCreatesTheDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "creds")
	require.NoError(t, Write(dir, 0o755, map[string]File{"a": {Data: []byte("a"), Mode: 0o600}}))
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())
	data, err := os.ReadFile(filepath.Join(dir, "a"))
	require.NoError(t, err)
	assert.Equal(t, "a", string(data))

	err = Write(filepath.Join(base, "missing", "creds"), 0o755, map[string]File{"a": {Data: []byte("a"), Mode: 0o600}})
	assert.ErrorIs(t, err, fs.ErrNotExist, "the parent must exist")
}
