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
//     half-written; private keys are never overwritten;
//   - the hidden --now flag (RFC 3339) fixes the clock for reproducible output.
package cli
