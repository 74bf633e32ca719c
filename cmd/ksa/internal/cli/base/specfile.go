package base

import (
	"strconv"
)

// maxQuoted bounds a value an error quotes, in bytes.
const maxQuoted = 64

// Quoted quotes a value for an error: Go-quoted, cut to maxQuoted bytes
// (on a rune boundary) with "..." when longer, so that an error never
// echoes a whole input.
func Quoted(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// BoundReason cuts a library's reason to a few hundred bytes.
func BoundReason(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
