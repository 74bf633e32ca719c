package atomicfile_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		existing  string
		noClobber bool
		wantErr   error
		want      string
	}{
		{name: "new file", want: "new"},
		{name: "new file, no clobber", noClobber: true, want: "new"},
		{name: "replaced", existing: "old", want: "new"},
		{name: "kept, no clobber", existing: "old", noClobber: true, wantErr: fs.ErrExist, want: "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "sub", "f")
			if tc.existing != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
				require.NoError(t, os.WriteFile(name, []byte(tc.existing), 0o600))
			}
			err := atomicfile.Write(name, []byte("new"), 0o640, tc.noClobber)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
				fi, err := os.Stat(name)
				require.NoError(t, err)
				assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm())
			}
			got, err := os.ReadFile(name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			entries, err := os.ReadDir(filepath.Dir(name))
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")
		})
	}
}

// TestWriteOverDirectory: a directory where the file should go is an
// error, and nothing is left behind.
func TestWriteOverDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.Error(t, atomicfile.Write(filepath.Join(dir, "d"), []byte("x"), 0o644, false))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}
