package atomicdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/atomicdir"
)

func files(kv ...string) map[string]atomicdir.File {
	out := map[string]atomicdir.File{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = atomicdir.File{Data: []byte(kv[i+1]), Mode: 0o640}
	}
	return out
}

// hidden lists the entries of dir that start with "..".
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestWriteSwaps: each write replaces every file at once, new names get a
// link, names no longer written lose theirs, and one hidden directory is
// left.
func TestWriteSwaps(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, atomicdir.Write(dir, 0o755, files("a.pem", "a1", "b.pem", "b1")))
	assert.Equal(t, "a1", read(t, filepath.Join(dir, "a.pem")))
	assert.Equal(t, "b1", read(t, filepath.Join(dir, "b.pem")))
	st, err := os.Stat(filepath.Join(dir, "a.pem"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())

	require.NoError(t, atomicdir.Write(dir, 0o755, files("a.pem", "a2", "c.pem", "c2")))
	assert.Equal(t, "a2", read(t, filepath.Join(dir, "a.pem")))
	assert.Equal(t, "c2", read(t, filepath.Join(dir, "c.pem")))
	_, err = os.Lstat(filepath.Join(dir, "b.pem"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a name no longer written is removed")
	assert.Len(t, hidden(t, dir), 2, "..data and one payload directory: %v", hidden(t, dir))
}

// TestWriteRefuses: names outside the layout, and names held by files the
// writer did not make, are refused before anything changes.
func TestWriteRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string)
		files map[string]atomicdir.File
	}{
		{name: "empty name", files: files("", "x")},
		{name: "hidden name", files: files("..data", "x")},
		{name: "path", files: files("sub/a.pem", "x")},
		{name: "regular file in the way", files: files("a.pem", "x"), setup: func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.pem"), []byte("mine"), 0o600))
		}},
		{name: "foreign link in the way", files: files("a.pem", "x"), setup: func(dir string) {
			require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(dir, "a.pem")))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(dir)
			}
			require.Error(t, atomicdir.Write(dir, 0o755, tc.files))
			assert.Empty(t, hidden(t, dir), "nothing written")
		})
	}
}

// TestWriteCleansLeftovers: a hidden directory left by an interrupted
// write goes with the next one.
func TestWriteCleansLeftovers(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..payload-left"), 0o700))
	require.NoError(t, atomicdir.Write(dir, 0o755, files("a.pem", "a1")))
	assert.NotContains(t, hidden(t, dir), "..payload-left")
}

// TestReadersSeeWholeWrites: a reader opening both files while writes go
// on always reads two files of the same write.
func TestReadersSeeWholeWrites(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, atomicdir.Write(dir, 0o755, files("a", "0", "b", "0")))
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// Both through ..data of one moment: open the directory link
			// once, as a reader of a set of files would.
			target, err := os.Readlink(filepath.Join(dir, atomicdir.DataLink))
			if err != nil {
				t.Error(err)
				return
			}
			a, errA := os.ReadFile(filepath.Join(dir, target, "a"))
			b, errB := os.ReadFile(filepath.Join(dir, target, "b"))
			if errA != nil || errB != nil {
				continue // that write's directory was removed meanwhile
			}
			if string(a) != string(b) {
				t.Errorf("torn read: a=%s b=%s", a, b)
				return
			}
		}
	})
	for i := range 200 {
		n := string(rune('0' + i%10))
		require.NoError(t, atomicdir.Write(dir, 0o755, files("a", n, "b", n)))
	}
	close(done)
	wg.Wait()
}
