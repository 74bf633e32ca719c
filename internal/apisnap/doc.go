// Package apisnap writes the exported API of the module's library packages
// as text, one line per exported declaration, so that a change to the API
// shows as a diff of the files under api/ and is made on purpose.
//
// Its test compares the API of every package of the module (internal
// packages, commands and examples aside) with api/<package path>.txt and
// fails with the lines added and removed; run with -update it rewrites
// the files:
//
//	$ go test ./internal/apisnap -update
//
// A line is one of:
//
//	# the line                      what it declares
//	const Name T = value            a constant, its type and exact value
//	                                (a time.Duration's also as "(24h0m0s)")
//	var Name T                      a variable
//	func Name(T1, T2) (R1, error)   a function, its parameter and result types
//	type Name struct                a type, then one line per exported field:
//	type Name struct, Field T       (embedded ones as "embedded T")
//	type Name interface { M, N }    an interface, then one line per method:
//	type Name interface, M(T) R
//	type Name underlying            any other defined type
//	type Name = T                   an alias
//	method (*Name) M(T) R           a method of Name's method set, promoted
//	                                ones included; (Name) when a value has it
//
// Types from other packages are written with their full import path
// (k8s.io/api/certificates/v1.PodCertificateRequest); the package's own
// are written bare. Lines are sorted. The packages are type-checked for
// linux/amd64, whatever the host, so the files do not depend on where the
// test runs.
//
// # Removals
//
// api/release.txt ([ReleaseFile]) holds the API at the last release
// (before the first, v0.0.0: the API when this check began), and the
// test holds the packages to it whether or not it runs with -update:
// [CheckRemovals] refuses a line of the release that the packages lack (a
// changed signature lacks its old line) unless its identifier is still
// declared with a "Deprecated:" doc comment (a forwarder), or
// CHANGELOG.md, in a section after that release, has an entry that
// names it and its replacement, each in a code span:
//
//	# CHANGELOG.md, under ## [Unreleased]:
//	### Removed
//
//	- `jwks.Parse`: use `jwks.ParseJSON` instead.
//
// Before the first release the entry may be under ### Removed or ###
// Deprecated. After it, the entry is under ### Removed and a release must
// have deprecated the identifier (an entry under ### Deprecated in the
// release file's section or an older one): a forwarder stays at least
// one minor version.
//
// An identifier is written after its package's name ("pkg.Name",
// "pkg.Type.Method", "pkg.Type.Field") or import path; a package gone is
// named by its import path or its directory ("podcert/podcertctl").
// Additions, a constant's value and an interface's new methods are not
// checked. [CheckDeprecations] holds each deprecated identifier to a doc
// link to its replacement in that paragraph and to an entry under ###
// Deprecated.
//
// When CHANGELOG.md names a release newer than the release file's (a
// release cut: "## [Unreleased]" became "## [0.1.0] - 2026-05-01"),
// -update writes the release file again with the API as it is, once the
// removals pass; until then the test fails, naming that command.
//
// [ParseChangelog] reads CHANGELOG.md and checks its structure as Keep a
// Changelog writes it; the module's root test holds ksa.Version to its
// newest release.
package apisnap
