package base

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/ksa-go/ksa"
)

// libraryPath is the module of the ksa library.
const libraryPath = "github.com/ksa-go/ksa"

// VersionInfo is what "ksa version" prints and the webhook's /info serves.
type VersionInfo struct {
	// Module is the command's module path.
	Module string `json:"module"`
	// Version is the module version, "(devel)" when built from a checkout.
	Version string `json:"version"`
	// Library is the version of the ksa library built in, "(devel)" when
	// it comes from a checkout.
	Library string `json:"library,omitempty"`
	// Declared is the version the library's source declares
	// (ksa.Version): the release it is, or the last release a checkout
	// follows. The command is released with the library, under the same
	// version.
	Declared string `json:"declared_version"`
	// Revision, Time and Modified are the VCS revision, its time, and
	// whether the checkout had changes, when the build recorded them.
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	// Go is the Go release that built the command.
	Go string `json:"go,omitempty"`
}

// ReadVersion reads the build's version from read (debug.ReadBuildInfo).
func ReadVersion(read func() (*debug.BuildInfo, bool)) VersionInfo {
	bi, ok := read()
	if !ok || bi == nil {
		return VersionInfo{Module: libraryPath + "/cmd/ksa", Version: "(unknown)", Declared: ksa.Version}
	}
	v := VersionInfo{Module: bi.Main.Path, Version: bi.Main.Version, Declared: ksa.Version, Go: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, d := range bi.Deps {
		if d.Path != libraryPath {
			continue
		}
		v.Library = d.Version
		if d.Replace != nil {
			v.Library = d.Replace.Version
			if v.Library == "" {
				v.Library = "(devel)"
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// Print writes the version as text. A version that is no release
// ("(devel)", "(unknown)") follows the declared one: "v0.1.0 (devel)".
func (v VersionInfo) Print(w io.Writer) {
	fmt.Fprintf(w, "ksa %s\nmodule:   %s\n", v.declared(v.Version), v.Module)
	if v.Library != "" {
		fmt.Fprintf(w, "library:  %s %s\n", libraryPath, v.declared(v.Library))
	}
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(w, "revision: %s%s\n", v.Revision, mod)
	}
	if v.Time != "" {
		fmt.Fprintf(w, "time:     %s\n", v.Time)
	}
	if v.Go != "" {
		fmt.Fprintf(w, "go:       %s\n", v.Go)
	}
}

// declared writes version after the declared version when it is no
// release but a word in parentheses.
func (v VersionInfo) declared(version string) string {
	if strings.HasPrefix(version, "(") && v.Declared != "" {
		return v.Declared + " " + version
	}
	return version
}

// InfoHandler serves the version as JSON on GET.
func InfoHandler(v VersionInfo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	})
}
