package apisnap

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// API is the exported API of the module's library packages: each
// package's snapshot file ([Package.File]) with its lines.
type API map[string][]string

// Module is the module as the checks read it.
type Module struct {
	// Path is the module path.
	Path string
	// API is the packages' exported API now.
	API API
	// Deprecated holds, by snapshot file, the identifiers whose doc
	// comment has a Deprecated paragraph ([Deprecations]).
	Deprecated map[string]map[string]string
}

// Problem is what a check refuses: a removal nothing answers for, or a
// deprecation that does not say what replaces it.
type Problem struct {
	// Name is the identifier as the changelog writes it ("jwks.Parse",
	// "extsigner.Ring.Update"), or the import path of a package.
	Name string
	// Lines are the lines of the release that the API lacks, for a
	// removal; the whole package's when it is gone.
	Lines []string
	// Entries are the lines of the changelog entries that name Name but
	// no replacement the API has.
	Entries []int
	// Fix says what to do.
	Fix string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Name)
	if len(p.Lines) > 0 {
		b.WriteString(", removed or changed:")
		for _, l := range p.Lines {
			b.WriteString("\n\t- " + l)
		}
	}
	b.WriteString("\n" + p.Fix)
	return b.String()
}

// placeholder stands for a replacement the check cannot know.
const placeholder = "<its replacement>"

// CheckRemovals holds the API to its release. A line of the release that
// the API lacks (a changed signature lacks the old line) is answered for
// when its identifier is still declared with a Deprecated doc comment (a
// forwarder; a type's covers its fields and methods), or by an entry of
// the changelog in a section newer than the release that names the
// identifier (or its type) and, in another code span, a replacement the
// API has (or a name from another module): before the first release
// (v0.0.0) under ### Removed or ### Deprecated; after it, under ###
// Removed, and the identifier must have been deprecated in a release (an
// entry under ### Deprecated in the release's section or an older one).
// A package that is gone is answered for by an entry naming its import
// path, or each of its identifiers. Additions are not checked, nor a
// constant's value or an interface's new methods.
func CheckRemovals(m Module, release Release, log Changelog) []Problem {
	c := newChecker(m, release.API)
	r := removals{checker: c, version: release.Version, released: release.Version != firstVersion}
	if !r.released {
		r.entries = log.Since(release.Version, headingRemoved, headingDeprecated)
	} else {
		r.entries = log.Since(release.Version, headingRemoved)
		r.deprecated = log.Until(release.Version, headingDeprecated)
	}
	var out []Problem
	for _, file := range slices.Sorted(maps.Keys(release.API)) {
		old := release.API[file]
		short, path := filePackage(m.Path, file)
		now, ok := m.API[file]
		if !ok {
			if p, ok := r.packageGone(file, old); !ok {
				out = append(out, p)
			}
			continue
		}
		have := keys(now)
		removed := map[string][]string{}
		for _, l := range old {
			if satisfied(l, have) {
				continue
			}
			d, _ := parseDecl(l)
			if c.forwarded(file, d) {
				continue
			}
			removed[d.ident()] = append(removed[d.ident()], l)
		}
		for _, id := range slices.Sorted(maps.Keys(removed)) {
			p := Problem{Name: short + "." + id, Lines: removed[id]}
			if id == "" {
				p.Name = path
				p.Fix = fmt.Sprintf("These lines of %s are not lines apisnap writes: take the file back from the release.", ReleaseFile)
				out = append(out, p)
				continue
			}
			if fix, ok := r.answered(file, id, p.Name, &p); !ok {
				p.Fix = fix
				out = append(out, p)
			}
		}
	}
	return out
}

// firstVersion is the release file's version before the first release.
const firstVersion = "v0.0.0"

// removals is CheckRemovals' reading of the changelog: the entries that
// may answer for a removal, and, after the first release, the
// deprecations it needs.
type removals struct {
	*checker
	version string
	// released: the release file is a release's, not v0.0.0.
	released   bool
	entries    []Entry
	deprecated []Entry
}

// answered reports whether the changelog answers for the removal of id
// from file's package (written name); if not, it says the fix and sets
// p.Entries.
func (r removals) answered(file, id, name string, p *Problem) (string, bool) {
	ok, named := r.cover(r.entries, file, id)
	if !ok {
		p.Entries = named
		return removalFix(name, named), false
	}
	if !r.released {
		return "", true
	}
	if ok, _ := r.cover(r.deprecated, file, id); ok {
		return "", true
	}
	return fmt.Sprintf("No release deprecated `%s` (CHANGELOG.md has no entry naming it and its replacement under ### Deprecated in %s or before): it stays one minor version more, as it was, a forwarder to its replacement with a doc comment paragraph \"Deprecated: Use [%s] instead.\", and named under ## [Unreleased] and ### Deprecated.",
		name, r.version, placeholder), false
}

// CheckDeprecations holds each identifier whose doc comment says
// "Deprecated:" to naming its replacement there, as a doc link
// ("Deprecated: Use [jwks.Parse] instead."), and to an entry of the
// changelog under ### Deprecated, in any section, that names it and a
// replacement the API has.
func CheckDeprecations(m Module, log Changelog) []Problem {
	c := newChecker(m, nil)
	entries := log.All(headingDeprecated)
	var out []Problem
	for _, file := range slices.Sorted(maps.Keys(m.Deprecated)) {
		short, path := filePackage(m.Path, file)
		deps := m.Deprecated[file]
		for _, id := range slices.Sorted(maps.Keys(deps)) {
			p := Problem{Name: short + "." + id}
			if id == "" {
				p.Name = path
			}
			links := docLinks(deps[id])
			if len(links) == 0 {
				p.Fix = fmt.Sprintf("Its Deprecated paragraph names no replacement: write it as a doc link, e.g. \"Deprecated: Use [%s] instead.\"", placeholder)
				out = append(out, p)
				continue
			}
			ok, named := c.cover(entries, file, id)
			if ok {
				continue
			}
			p.Entries = named
			p.Fix = deprecationFix(p.Name, qualify(short, links[0]), named)
			out = append(out, p)
		}
	}
	return out
}

// checker resolves the changelog's names against the module's API.
type checker struct {
	m Module
	// files are the snapshot files of the module's packages, now or at
	// the release; idents each current file's identifiers (types, their
	// members, functions, variables, constants).
	files  map[string]bool
	idents map[string]map[string]bool
}

func newChecker(m Module, release API) *checker {
	c := &checker{m: m, files: map[string]bool{}, idents: map[string]map[string]bool{}}
	for file, lines := range m.API {
		c.files[file] = true
		ids := map[string]bool{}
		for _, l := range lines {
			if d, ok := parseDecl(l); ok {
				ids[d.name] = true
				ids[d.ident()] = true
			}
		}
		c.idents[file] = ids
	}
	for file := range release {
		c.files[file] = true
	}
	return c
}

// forwarded reports whether the identifier of a line the API lacks is
// still declared, deprecated: the line's own identifier or its type.
func (c *checker) forwarded(file string, d decl) bool {
	deps := c.m.Deprecated[file]
	_, own := deps[d.ident()]
	_, typ := deps[d.name]
	return d.name != "" && (own || typ)
}

// cover looks for an entry that names id of file's package (id "" is
// the package; a member is also covered by its type) and a replacement.
// It reports whether one does, and the lines of those naming id without
// a replacement the API has.
func (c *checker) cover(entries []Entry, file, id string) (bool, []int) {
	var named []int
	for _, e := range entries {
		var mine, others []name
		for _, n := range names(e) {
			if c.matches(n, file, id) {
				mine = append(mine, n)
			} else {
				others = append(others, n)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if slices.ContainsFunc(others, c.exists) {
			return true, nil
		}
		named = append(named, e.Line)
	}
	return false, named
}

// matches reports whether n names id of file's package, or its type.
func (c *checker) matches(n name, file, id string) bool {
	files, module := c.resolve(n.pkg)
	if !module || !slices.Contains(files, file) {
		return false
	}
	typ, _, _ := strings.Cut(id, ".")
	return n.ident == id || n.ident == typ && id != ""
}

// exists reports whether n is in the API now, or is another module's.
func (c *checker) exists(n name) bool {
	files, module := c.resolve(n.pkg)
	if !module {
		return true
	}
	for _, f := range files {
		if ids, ok := c.idents[f]; ok && (n.ident == "" || ids[n.ident]) {
			return true
		}
	}
	return false
}

// resolve finds the snapshot files of the module's packages that pkg,
// a package's name or import path, may be: module reports whether pkg
// is the module's at all (files may then be of packages gone). A path
// relative to the module's root names its package too.
func (c *checker) resolve(pkg string) (files []string, module bool) {
	for file := range c.files {
		short, path := filePackage(c.m.Path, file)
		if pkg == short || pkg == path || c.m.Path+"/"+pkg == path {
			files = append(files, file)
		}
	}
	inModule := pkg == c.m.Path || strings.HasPrefix(pkg, c.m.Path+"/")
	return files, len(files) > 0 || inModule
}

// packageGone answers for a package that is no longer there: an entry
// naming its import path and a replacement, or one for each identifier.
func (r removals) packageGone(file string, old []string) (Problem, bool) {
	_, path := filePackage(r.m.Path, file)
	p := Problem{Name: path, Lines: old}
	fix, ok := r.answered(file, "", path, &p)
	if ok {
		return Problem{}, true
	}
	all := len(old) > 0
	for _, l := range old {
		d, _ := parseDecl(l)
		if _, ok := r.answered(file, d.ident(), "", &Problem{}); !ok || d.name == "" {
			all = false
			break
		}
	}
	if all {
		return Problem{}, true
	}
	p.Fix = fix
	return p, false
}

// removalFix says how to answer for a removal of name.
func removalFix(name string, named []int) string {
	if len(named) > 0 {
		return fmt.Sprintf("CHANGELOG.md:%s names `%s` but no replacement the API has: add, in a code span, the name of what replaces it (`pkg.Name`, `pkg.Type.Method`, a package's import path).",
			lineList(named), name)
	}
	return fmt.Sprintf("Keep `%s` as it was, a forwarder to its replacement with a doc comment paragraph \"Deprecated: Use [%s] instead.\"; or say in CHANGELOG.md, under ## [Unreleased] and ### Removed:\n\n\t- `%s`: use `%s` instead.",
		name, placeholder, name, placeholder)
}

// deprecationFix says how to record the deprecation of name, replaced
// by with.
func deprecationFix(name, with string, named []int) string {
	if len(named) > 0 {
		return fmt.Sprintf("CHANGELOG.md:%s names `%s` but no replacement the API has: add `%s` to it.", lineList(named), name, with)
	}
	return fmt.Sprintf("Its doc comment says Deprecated: say it in CHANGELOG.md, under ## [Unreleased] and ### Deprecated:\n\n\t- `%s`: use `%s` instead.", name, with)
}

func lineList(lines []int) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = fmt.Sprint(l)
	}
	return strings.Join(parts, ",")
}

// qualify writes a doc link of package short's comment as the changelog
// names it: a link without a package ([Parse], [Ring.Update]) is short's.
func qualify(short, link string) string {
	if isExported(link) || isMemberLink(link) {
		return short + "." + link
	}
	return link
}
