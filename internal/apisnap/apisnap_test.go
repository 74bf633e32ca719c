package apisnap_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

var update = flag.Bool("update", false, "rewrite api/ with the packages' exported API")

// updateCommand rewrites the snapshot, from the module's root.
const updateCommand = "go test ./internal/apisnap -update"

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// TestAPI holds the exported API of every library package to its file
// under api/ ("snapshot": a difference fails with the lines added (+)
// and removed (-) and the command that accepts them), and to the last
// release's API in api/release.txt ("removals": a line the packages lack
// needs a Deprecated forwarder or a CHANGELOG.md entry naming its
// replacement, -update or not). "deprecations" holds each deprecated
// identifier to naming its replacement; "release" holds api/release.txt
// to CHANGELOG.md's newest release (-update writes it again after a
// release).
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
	m := apisnap.Module{API: apisnap.API{}, Deprecated: map[string]map[string]string{}}
	for _, p := range pkgs {
		require.NotEqual(t, apisnap.ReleaseFile, p.File(), "package %s would have the release's file as its snapshot: rename its directory", p.Path)
		require.False(t, strings.HasPrefix(p.Rel, "examples/"), "package %s is an example's, not the library's", p.Path)
		if p.Rel == "." {
			m.Path = p.Path
		}
		m.API[p.File()] = apisnap.Lines(p.Types)
		if len(p.Deprecated) > 0 {
			m.Deprecated[p.File()] = p.Deprecated
		}
	}
	require.NotEmpty(t, m.Path, "no package at the module's root")
	b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	log, err := apisnap.ParseChangelog(string(b))
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(apisnap.ReleaseFile)))
	require.NoError(t, err, "%s is the API at the last release: take it back from the release", apisnap.ReleaseFile)
	release, err := apisnap.ParseRelease(string(b))
	require.NoError(t, err)

	t.Run("snapshot", func(t *testing.T) { snapshot(t, m.API) })
	removals := t.Run("removals", func(t *testing.T) {
		of := "the API of " + release.Version
		if release.Version == "v0.0.0" {
			of = "the API before the first release"
		}
		report(t, fmt.Sprintf("The packages lack lines of %s (%s) that nothing answers for.", of, apisnap.ReleaseFile),
			apisnap.CheckRemovals(m, release, log))
	})
	t.Run("deprecations", func(t *testing.T) {
		report(t, "Deprecated identifiers must say what replaces them.", apisnap.CheckDeprecations(m, log))
	})
	t.Run("release", func(t *testing.T) {
		newest, ok := log.Released()
		require.True(t, ok, "CHANGELOG.md has no release section, and no %q", apisnap.HistoryHeading)
		want := "v" + newest.Version
		assert.Equal(t, string(b), release.Format(m.Path), "%s is not as apisnap writes it: take it back from the release", apisnap.ReleaseFile)
		switch c := apisnap.CompareVersions(release.Version, want); {
		case c > 0:
			t.Errorf("%s holds the API of %s, newer than CHANGELOG.md's newest release, %s (line %d): take it back from that release",
				apisnap.ReleaseFile, release.Version, want, newest.Line)
		case c < 0 && *update && removals:
			next := apisnap.Release{Version: want, API: m.API}
			require.NoError(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(apisnap.ReleaseFile)), []byte(next.Format(m.Path)), 0o644))
		case c < 0:
			t.Errorf("%s holds the API of %s, but CHANGELOG.md's newest release is %s (line %d): once the removals pass, make it that release's API with\n\n\t%s",
				apisnap.ReleaseFile, release.Version, want, newest.Line, updateCommand)
		}
	})
}

// report fails t with the problems, if any, after what.
func report(t *testing.T, what string, problems []apisnap.Problem) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = p.String()
	}
	t.Errorf("%s An exported identifier that moves or changes keeps a Deprecated forwarder for at least one minor version, and CHANGELOG.md names it with its replacement (README.md's Development).\n\n%s",
		what, strings.Join(parts, "\n\n"))
}

// snapshot compares the API with the files under api/, or with -update
// writes them.
func snapshot(t *testing.T, want apisnap.API) {
	have := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "api"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || filepath.ToSlash(rel) == apisnap.ReleaseFile {
			return err
		}
		b, err := os.ReadFile(path)
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

func keys(ms ...apisnap.API) func(func(string) bool) {
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
