package apisnap_test

import (
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

var update = flag.Bool("update", false, "rewrite api/ with the packages' exported API")

// updateCommand rewrites the snapshot, from the module's root.
const updateCommand = "go test ./internal/apisnap -update"

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// TestAPI compares the exported API of every library package with its
// file under api/. A difference fails the test with the lines added (+)
// and removed (-) and the command that accepts them.
func TestAPI(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list the packages")
	readTree(t)
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	pkgs, err := apisnap.Load(goTool, root, flags...)
	require.NoError(t, err)
	want := map[string][]string{}
	for _, p := range pkgs {
		want[p.File()] = apisnap.Lines(p.Types)
	}
	have := map[string][]string{}
	err = filepath.WalkDir(filepath.Join(root, "api"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		slices.Sort(lines)
		have[filepath.ToSlash(rel)] = lines
		return nil
	})
	if !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	if *update {
		for file, lines := range want {
			path := filepath.Join(root, filepath.FromSlash(file))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		}
		for file := range have {
			if _, ok := want[file]; !ok {
				require.NoError(t, os.Remove(filepath.Join(root, filepath.FromSlash(file))))
			}
		}
		return
	}
	var report []string
	for _, file := range slices.Sorted(keys(want, have)) {
		w, wok := want[file]
		h, hok := have[file]
		switch {
		case !hok:
			report = append(report, file+": missing (a new package)")
		case !wok:
			report = append(report, file+": no package has this directory any more")
		default:
			if d := diff(h, w); d != "" {
				report = append(report, file+":\n"+d)
			}
		}
	}
	if len(report) > 0 {
		t.Errorf("the exported API differs from api/:\n\n%s\n\nIf the change is deliberate, accept it with\n\n\t%s\n\nand say it in CHANGELOG.md.",
			strings.Join(report, "\n"), updateCommand)
	}
}

// readTree reads every directory of the module where a package could be,
// so that go test's cache, which records what a test opens, runs this test
// again when a file or a package is added.
func readTree(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == root {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			return filepath.SkipDir // another module: interop, cmd/ksa
		}
		return nil
	})
	require.NoError(t, err)
}

func keys(ms ...map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// diff lists the lines of want that have lacks (+) and those of have that
// want lacks (-); both are sorted sets.
func diff(have, want []string) string {
	var b strings.Builder
	for _, l := range have {
		if _, found := slices.BinarySearch(want, l); !found {
			b.WriteString("\t- " + l + "\n")
		}
	}
	for _, l := range want {
		if _, found := slices.BinarySearch(have, l); !found {
			b.WriteString("\t+ " + l + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
