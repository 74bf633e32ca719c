// Package base is what every command group of ksa shares: the App (the
// streams, the clock, the key stores opened), the root command and its
// groups, the flags' errors with their fixes (Error, Fail, Usage), the
// output formats, the terminal-safe escaping of text output (TermSafe),
// and the atomic, no-clobber writes of the command's files. It imports no
// command group.
package base
