// Package cli is the ksa command: a cobra command tree over the ksa
// library's public API. Main runs it with explicit arguments and streams,
// so the command runs the same way from main, from tests and from script
// tests. It only assembles the root: each command group is a package of its
// own (issuercmd, tokencmd, x509cmd, credspeccmd, signercmd, podcertcmd,
// spiffecmd, credprovcmd), over what they share (base, keyflags); no group imports
// another group or cli, and a group runs under a root of its own in its
// tests (clitest). Each command is a flags struct and a run method.
//
// Conventions every command follows:
//   - data output is text by default; -o json or -o yaml print the same
//     facts as a document (snake_case members), and commands whose output
//     is a Kubernetes manifest take -o yaml or json;
//   - text output prints every value taken from a token, a certificate or
//     a server through one rule (termSafe: printable strings as they are,
//     anything else Go-quoted), so nothing they hold reaches the terminal
//     as a control sequence or forges a line; JSON and YAML keep values
//     exactly;
//   - a failure is one line on standard error, "ksa: <what>; fix: <how>",
//     exit status 1; a usage error (unknown flag, missing argument, a flag
//     that would be ignored, a value Kubernetes would refuse) exits 2. The
//     fix names the flag to change, in the command's words, and says more
//     than the problem ("fix --flag" does not: messages_test.go refuses a
//     fix whose words are all the problem's): a library's Go field names
//     are translated, cobra's errors get a fix too, and an error never
//     quotes more than a few hundred bytes of input, nor a credential of a
//     URL (user information, query: publish.RedactURL);
//   - a command the output tells the user to run runs as printed
//     (arguments shell-quoted);
//   - files are written to a temporary name and renamed, so nothing is left
//     half-written, and every output is checked before any is written; an
//     existing file is replaced only with --force (or, for render, when it
//     is one of the documents render writes), never when it holds a private
//     key, and never when the command reads it as a key (by path, or as the
//     same file through a link);
//   - the hidden --now flag (RFC 3339) fixes the clock for reproducible
//     output (a scheduled rotation that writes takes it only with
//     --insecure-now, shown in its help as insecure, for tests);
//   - a scheduled rotation (issuer rotate --ring --to) holds FILE.lock
//     beside the ring file for its whole run, and writes the store only
//     where it still holds what the run read (publish.Store.PutIf).
package cli
