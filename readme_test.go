package ksa_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// block is a fenced code block of README.md: its language and text.
type block struct {
	lang, text string
}

// readmeSection returns the fenced blocks of README.md between the line
// "<!-- use-library:NAME -->" and the next "<!-- /use-library -->".
func readmeSection(t *testing.T, readme, name string) []block {
	t.Helper()
	start := "<!-- use-library:" + name + " -->\n"
	_, rest, ok := strings.Cut(readme, start)
	require.True(t, ok, "README.md has no line %q", strings.TrimSpace(start))
	section, _, ok := strings.Cut(rest, "<!-- /use-library -->")
	require.True(t, ok, "README.md's section %s has no end marker", name)
	var blocks []block
	for {
		_, after, ok := strings.Cut(section, "```")
		if !ok {
			return blocks
		}
		lang, after, _ := strings.Cut(after, "\n")
		text, after, ok := strings.Cut(after, "```")
		require.True(t, ok, "README.md's section %s has an unclosed code block", name)
		blocks = append(blocks, block{lang: lang, text: text})
		section = after
	}
}

// TestReadmeUseTheLibrary follows README.md's "Use the library" as a
// newcomer would: in a temporary directory holding ksa, a link to this
// checkout, it runs the shell blocks of each way (a replace, a workspace)
// as one script, saving the Go block as main.go where it stands (the
// workspace way reuses the first way's, after its first shell block), and
// compares what the program prints with the text block. The go command
// starts with an empty module cache and asks a module proxy that refuses
// the unpublished modules of this repository, as the public proxy does
// (403 Forbidden or 404 Not Found), and serves every other module from
// the module cache that testing this module filled: a recipe that asks the
// proxy for github.com/ksa-go/ksa fails here as it fails for a newcomer.
// The checksum database is off (GOSUMDB=off): the modules served were
// verified when they entered this machine's cache, and the test runs
// offline.
func TestReadmeUseTheLibrary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to follow the README")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	checkout, err := os.Getwd()
	require.NoError(t, err)

	first := readmeSection(t, readme, "replace")
	var program, output string
	for _, bl := range first {
		switch bl.lang {
		case "go":
			program = bl.text
		case "text":
			output = bl.text
		}
	}
	require.NotEmpty(t, program, "the replace way has no Go block")
	require.NotEmpty(t, output, "the replace way has no text block of the output")

	modcache, err := exec.Command(goTool, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	downloads := filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download")

	for _, tc := range []struct {
		name    string
		section string
		// refusal is how the proxy answers for this repository's modules.
		refusal int
	}{
		{name: "go mod edit -replace, 403", section: "replace", refusal: http.StatusForbidden},
		{name: "go mod edit -replace, 404", section: "replace", refusal: http.StatusNotFound},
		{name: "go work init, 403", section: "work", refusal: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks := readmeSection(t, readme, tc.section)
			var script strings.Builder
			script.WriteString("set -eu\n")
			wrote := false
			for i, bl := range blocks {
				switch bl.lang {
				case "sh":
					script.WriteString(bl.text)
				case "go":
					script.WriteString("cat > main.go <<'EOF'\n" + bl.text + "EOF\n")
					wrote = true
				}
				if i == 0 && !hasGo(blocks) {
					script.WriteString("cat > main.go <<'EOF'\n" + program + "EOF\n")
					wrote = true
				}
			}
			require.True(t, wrote, "no program was saved")

			proxy := refusingProxy(t, downloads, tc.refusal)
			dir := t.TempDir()
			require.NoError(t, os.Symlink(checkout, filepath.Join(dir, "ksa")))
			cmd := exec.Command(bash, "-c", script.String())
			cmd.Dir = dir
			// GOENV=off: no setting of the user's go env file (GOPRIVATE,
			// GOPROXY) takes the go command around the proxy.
			cmd.Env = append(environ("GOENV", "GOWORK", "GOPROXY", "GOFLAGS", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOINSECURE", "GOMODCACHE", "GOTOOLCHAIN"),
				"GOENV=off", "GOPROXY="+proxy.URL, "GOSUMDB=off", "GOMODCACHE="+filepath.Join(t.TempDir(), "mod"),
				// -modcacherw: the test's module cache can be removed.
				"GOFLAGS=-modcacherw", "GOTOOLCHAIN=local")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "script:\n%s\nstderr:\n%s", script.String(), stderr.String())
			assert.Equal(t, output, stdout.String())
		})
	}
}

// refusingProxy serves the module cache's download directory (a tree in
// the layout of the module proxy protocol) as a module proxy, answering
// refusal for every module of this repository (github.com/ksa-go/...), as
// the public proxy answers for modules it cannot fetch.
func refusingProxy(t *testing.T, downloads string, refusal int) *httptest.Server {
	t.Helper()
	files := http.FileServer(http.Dir(downloads))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/github.com/ksa-go/") {
			http.Error(w, "not found: "+strings.TrimPrefix(r.URL.Path, "/")+": unpublished", refusal)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func hasGo(blocks []block) bool {
	for _, bl := range blocks {
		if bl.lang == "go" {
			return true
		}
	}
	return false
}

// environ is the test's environment without the named variables.
func environ(drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			if name == d {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// TestReadmeGoVersion holds README.md's prerequisite to the go line of
// go.mod.
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var version string
	for _, line := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			version = strings.TrimSpace(v)
		}
	}
	require.NotEmpty(t, version, "go.mod has no go line")
	assert.Contains(t, string(readme), "\n- Go "+version+" or later (the `go` line of `go.mod`)")
}
