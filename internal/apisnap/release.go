package apisnap

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ReleaseFile holds the exported API at the module's last release, the
// baseline of [CheckRemovals], relative to the module's root. It would
// be the snapshot file of a package "release" at the root, which the
// test refuses.
const ReleaseFile = "api/release.txt"

// Release is the exported API at a release.
type Release struct {
	// Version is the release's version, "v0.1.0"; "v0.0.0" before the
	// first release (the history section of the changelog).
	Version string
	API     API
}

// releaseHeader opens the release file; its first line says which API
// it is.
const releaseHeader = `%s
# go test ./internal/apisnap answers for each line here that the packages
# lack with a Deprecated forwarder or a CHANGELOG.md entry; -update writes
# this file again once CHANGELOG.md has a newer release. One line a
# declaration: "<package directory>: <line>".
`

// releaseTitle is the header's first line.
func releaseTitle(module, version string) string {
	if version == "v0.0.0" {
		return "# The exported API of " + module + " before its first release."
	}
	return "# The exported API of " + module + " " + version + ", its last release."
}

// Format writes the release file: the header, "version v0.1.0", then one
// line a declaration, its package's snapshot file without "api/" and
// ".txt" before it ("oidc/oidctest: type Issuer struct"), sorted.
func (r Release) Format(module string) string {
	var b strings.Builder
	fmt.Fprintf(&b, releaseHeader, releaseTitle(module, r.Version))
	b.WriteString("version " + r.Version + "\n")
	for _, file := range slices.Sorted(maps.Keys(r.API)) {
		dir := strings.TrimSuffix(strings.TrimPrefix(file, "api/"), ".txt")
		for _, l := range r.API[file] {
			b.WriteString(dir + ": " + l + "\n")
		}
	}
	return b.String()
}

// ParseRelease reads what [Release.Format] writes; lines starting with #
// are comments.
func ParseRelease(text string) (Release, error) {
	r := Release{API: API{}}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if r.Version == "" {
			v, ok := strings.CutPrefix(line, "version v")
			if _, valid := parseVersion(v); !ok || !valid {
				return Release{}, fmt.Errorf("apisnap: %s:%d: %q: the first line after the comments is \"version vX.Y.Z\"", ReleaseFile, i+1, line)
			}
			r.Version = "v" + v
			continue
		}
		dir, decl, ok := strings.Cut(line, ": ")
		if !ok || dir == "" || strings.Contains(dir, " ") {
			return Release{}, fmt.Errorf("apisnap: %s:%d: %q: a line is \"<package directory>: <line>\"", ReleaseFile, i+1, line)
		}
		file := "api/" + dir + ".txt"
		r.API[file] = append(r.API[file], decl)
	}
	if r.Version == "" {
		return Release{}, fmt.Errorf("apisnap: %s: no \"version vX.Y.Z\" line", ReleaseFile)
	}
	return r, nil
}
