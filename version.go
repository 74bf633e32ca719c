package ksa

// Version is the module's version: the release this source is, or,
// between releases, the last release it follows (what changed since is
// under CHANGELOG.md's Unreleased). v0.0.0 is before the first release.
// A test holds it to CHANGELOG.md's newest release; a release changes
// both.
//
// Before v1.0.0, a minor version may remove an identifier deprecated in
// an earlier minor version: an exported identifier that moves or changes
// keeps a forwarder, marked Deprecated and naming its replacement, for
// at least one minor version.
const Version = "v0.1.0"
