package privdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMake: the directory made is private (0700 whatever the umask), of
// this user, and held by descriptor: renamed away after Make, it is still
// the one written.
func TestMake(t *testing.T) {
	parent := t.TempDir()
	root, err := os.OpenRoot(parent)
	require.NoError(t, err)
	defer root.Close()
	dir, name, err := Make(root, ".tmp-")
	require.NoError(t, err)
	defer dir.Close()
	assert.Regexp(t, `^\.tmp-[0-9a-f]{16}$`, name)
	fi, err := os.Lstat(filepath.Join(parent, name))
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	// Another writer of the parent swaps the name for a link elsewhere:
	// the directory held is still the one made.
	require.NoError(t, os.Rename(filepath.Join(parent, name), filepath.Join(parent, "moved")))
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(parent, name)))
	require.NoError(t, dir.WriteFile("f", []byte("x"), 0o600))
	_, err = os.Stat(filepath.Join(parent, "moved", "f"))
	require.NoError(t, err)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")
}

// TestOpenRefusesReplaced: what another writer can put at the name before
// it is opened is refused: a link (to a directory open to others), a
// directory open to others, a directory of another user.
func TestOpenRefusesReplaced(t *testing.T) {
	parent := t.TempDir()
	root, err := os.OpenRoot(parent)
	require.NoError(t, err)
	defer root.Close()
	shared := filepath.Join(parent, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o777))
	require.NoError(t, os.Symlink("shared", filepath.Join(parent, "link")))
	for _, name := range []string{"shared", "link"} {
		_, err := open(root, name)
		assert.ErrorIs(t, err, ErrReplaced, name)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: another user's directory cannot be made")
		return
	}
	theirs := filepath.Join(parent, "theirs")
	require.NoError(t, os.Mkdir(theirs, 0o700))
	require.NoError(t, os.Chown(theirs, 4242, 4242))
	_, err = open(root, "theirs")
	assert.ErrorIs(t, err, ErrReplaced, "a private directory of another user")
}
