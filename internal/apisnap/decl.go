package apisnap

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// decl is one line of a snapshot taken apart: the identifier it declares
// and what a later API must still have for the line to hold.
type decl struct {
	// name is the package-level name; member the field, embedded field,
	// interface method or method of name the line declares, if any.
	name, member string
	// key is the line as the removal check compares it (see key).
	key string
}

// ident is the line's identifier as the changelog names it after the
// package: "Name" or "Type.Member".
func (d decl) ident() string {
	if d.member == "" {
		return d.name
	}
	return d.name + "." + d.member
}

// parseDecl takes apart a line written by [Lines]. It reports false for a
// line it cannot read, which the removal check then compares whole.
func parseDecl(line string) (decl, bool) {
	kind, rest, ok := strings.Cut(line, " ")
	if !ok {
		return decl{}, false
	}
	switch kind {
	case "const", "var", "func":
		name, _ := leadingIdent(rest)
		if name == "" {
			return decl{}, false
		}
		d := decl{name: name, key: line}
		if kind == "const" {
			// A constant's value may change; its name and type may not.
			d.key, _, _ = strings.Cut(line, " = ")
		}
		return d, true
	case "type":
		return parseType(line, rest)
	case "method":
		recv, after, ok := strings.Cut(strings.TrimPrefix(rest, "("), ") ")
		if !ok || !strings.HasPrefix(rest, "(") {
			return decl{}, false
		}
		recv = strings.TrimPrefix(recv, "*")
		recv, _, _ = strings.Cut(recv, "[")
		member, _ := leadingIdent(after)
		if !isIdent(recv) || member == "" {
			return decl{}, false
		}
		return decl{name: recv, member: member, key: line}, true
	}
	return decl{}, false
}

// parseType reads the lines of a type: the type itself, one of its
// fields or one of its interface's methods.
func parseType(line, rest string) (decl, bool) {
	name, after := leadingIdent(rest)
	if name == "" {
		return decl{}, false
	}
	after = skipBrackets(after)
	head := line[:len(line)-len(after)]
	d := decl{name: name, key: line}
	switch {
	case strings.HasPrefix(after, " struct, embedded "):
		d.member = embeddedName(strings.TrimPrefix(after, " struct, embedded "))
	case strings.HasPrefix(after, " struct, "):
		d.member, _ = leadingIdent(strings.TrimPrefix(after, " struct, "))
	case strings.HasPrefix(after, " interface, "):
		d.member, _ = leadingIdent(strings.TrimPrefix(after, " interface, "))
	case after == " interface {}" || strings.HasPrefix(after, " interface { "):
		// The list of an interface's methods: each method has its own
		// line, so the list only says the type is still an interface;
		// a method added is an addition.
		d.key = head + " interface"
		return d, true
	default: // the type itself
		return d, true
	}
	return d, d.member != ""
}

// embeddedName is the name of an embedded field of type t: its type's
// name without pointer, package or type arguments.
func embeddedName(t string) string {
	t = strings.TrimPrefix(t, "*")
	t, _, _ = strings.Cut(t, "[")
	t = t[strings.LastIndex(t, "/")+1:]
	t = t[strings.LastIndex(t, ".")+1:]
	name, rest := leadingIdent(t)
	if rest != "" {
		return ""
	}
	return name
}

// leadingIdent splits s after the Go identifier it starts with.
func leadingIdent(s string) (ident, rest string) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			break
		}
		i += size
	}
	return s[:i], s[i:]
}

// skipBrackets skips the bracketed type parameters s may start with.
func skipBrackets(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}

// isIdent reports whether s is a Go identifier.
func isIdent(s string) bool {
	ident, rest := leadingIdent(s)
	return ident != "" && rest == ""
}

// isExported reports whether s is an exported Go identifier.
func isExported(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isIdent(s) && unicode.IsUpper(r)
}

// satisfied reports whether an API whose lines' keys are have still has
// what line, a line of an earlier API, declared. A method a pointer has
// is still there when a value has it too.
func satisfied(line string, have map[string]bool) bool {
	d, ok := parseDecl(line)
	if !ok {
		return have[line]
	}
	return have[d.key]
}

// keys are the keys of an API's lines, for satisfied: a value's method
// counts for the pointer too.
func keys(lines []string) map[string]bool {
	have := make(map[string]bool, len(lines))
	for _, l := range lines {
		d, ok := parseDecl(l)
		if !ok {
			have[l] = true
			continue
		}
		have[d.key] = true
		if strings.HasPrefix(l, "method (") && !strings.HasPrefix(l, "method (*") {
			have["method (*"+strings.TrimPrefix(l, "method (")] = true
		}
	}
	return have
}
