// Package rpsize compares a minimal relying party on ksa with the same
// program on go-oidc: binary size and the modules linked in.
package rpsize

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build compiles one of the programs and returns its size and the modules
// `go version -m` lists for it (the main module excluded).
func build(t *testing.T, pkg string) (size int64, modules []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	b, err = exec.Command("go", "version", "-m", out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "dep" {
			modules = append(modules, f[1])
		}
	}
	return fi.Size(), modules
}

// TestRelyingPartyBinarySize: a relying party on ksa is no larger than the
// same program on go-oidc, and links fewer modules. Run with -v for the
// figures.
func TestRelyingPartyBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	ksaSize, ksaMods := build(t, "./ksarp")
	goSize, goMods := build(t, "./gooidcrp")
	t.Logf("ksa:     %d bytes, %d modules %v", ksaSize, len(ksaMods), ksaMods)
	t.Logf("go-oidc: %d bytes, %d modules %v", goSize, len(goMods), goMods)
	assert.LessOrEqual(t, ksaSize, goSize, "the ksa relying party is larger than go-oidc's")
	assert.LessOrEqual(t, len(ksaMods), len(goMods))
}
