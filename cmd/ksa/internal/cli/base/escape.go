package base

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TermSafe is the one rule for printing a value the command did not choose
// (a token's claims, a certificate's names, a server's documents and
// errors) in text output: a value made only of printable characters
// (letters, marks, numbers, punctuation, symbols and the ASCII space) is
// printed as it is, so ordinary output is unchanged; any other value is
// printed Go-quoted, with control characters (ESC, CR, LF, the rest of C0
// and C1), format characters such as the bidi overrides U+202E and U+2066
// to U+2069, and invalid UTF-8 escaped. A value can then neither move the
// cursor, clear the screen, open a link (OSC 8), reorder the line nor forge
// a line of its own. JSON and YAML output carry values exactly.
func TermSafe(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return strconv.Quote(s)
			}
		}
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// TermSafeAll applies termSafe to each value and joins them with sep.
func TermSafeAll(values []string, sep string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = TermSafe(v)
	}
	return strings.Join(out, sep)
}

// maxWord bounds each word of a message: an error that quotes its input
// (a library's, a server's) cannot echo a token or a 60 KB line.
const maxWord = 200

// OneLine folds a message onto one line and makes it safe to print: white
// space of any kind (CR and LF included) becomes one space, a word longer
// than maxWord bytes is cut, and each word goes through termSafe, so a
// remote value quoted in an error (a server's status text, a library error
// quoting its input) can neither forge a line, send escapes to the
// terminal, nor run on for pages.
func OneLine(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if len(w) > maxWord {
			cut := maxWord
			for cut > 0 && !isRuneStart(w[cut]) {
				cut--
			}
			words[i] = w[:cut] + "..."
		}
	}
	return TermSafeAll(words, " ")
}
