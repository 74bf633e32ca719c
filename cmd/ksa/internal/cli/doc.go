// Package cli is the ksa command: a cobra command tree over the ksa
// library. Main runs it with explicit arguments and streams, so the
// command runs the same way from main, from tests and from script tests.
//
// Conventions every command follows:
//   - data output is text by default; -o json or -o yaml print the same
//     facts as a document (snake_case members);
//   - a failure is one line on standard error, "ksa: <what>; fix: <how>",
//     exit status 1; a usage error (unknown flag, missing argument) exits 2;
//   - files are written to a temporary name and renamed, so nothing is left
//     half-written; an existing file is replaced only with --force (or, for
//     render, when it is one of the documents render writes), never when it
//     holds a private key, and never when the command reads it as a key
//     (by path, or as the same file through a link);
//   - the hidden --now flag (RFC 3339) fixes the clock for reproducible output.
package cli
