package jsonx

import (
	"strconv"
	"strings"
)

// Member is one object member met by Walk: the path of the object holding
// it ("$", "$.keys[0]", "$.meta.list[2]"), its name, unescaped, and whether
// the same object named it before (encoding/json keeps the last value, other
// parsers the first).
type Member struct {
	Path     string
	Name     string
	Repeated bool
}

// Walk reads one strict JSON text to its end and calls visit for every
// object member, at any depth, before reading its value. When visit returns
// true the value is skipped (still checked) without being walked. Anything
// the Reader refuses is an error (*SyntaxError): invalid UTF-8, lone
// surrogates, trailing data, nesting deeper than maxDepth (<= 0 means
// DefaultMaxDepth).
func Walk(data []byte, maxDepth int, visit func(Member) (skip bool)) error {
	r := NewReader(data, maxDepth)
	if err := r.WalkValue("$", visit); err != nil {
		return err
	}
	return r.End()
}

// WalkValue reads the next value as Walk reads a whole text, with path
// naming where the value is.
func (r *Reader) WalkValue(path string, visit func(Member) (skip bool)) error {
	switch r.Peek() {
	case '{':
		obj, err := r.Object()
		if err != nil {
			return err
		}
		var seen Names
		for {
			name, ok, err := obj.Next()
			if err != nil || !ok {
				return err
			}
			m := Member{Path: path, Name: string(name), Repeated: !seen.Add(name)}
			if visit(m) {
				if err := r.Skip(); err != nil {
					return err
				}
				continue
			}
			if err := r.WalkValue(memberPath(path, m.Name), visit); err != nil {
				return err
			}
		}
	case '[':
		arr, err := r.Array()
		if err != nil {
			return err
		}
		for i := 0; ; i++ {
			more, err := arr.Next()
			if err != nil || !more {
				return err
			}
			if err := r.WalkValue(path+"["+strconv.Itoa(i)+"]", visit); err != nil {
				return err
			}
		}
	default:
		return r.Skip()
	}
}

// memberPath appends a member to a path: .name for simple names, a quoted
// ["name"] otherwise.
func memberPath(path, name string) string {
	simple := name != ""
	for i := 0; i < len(name) && simple; i++ {
		c := name[i]
		simple = c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	if simple {
		return path + "." + name
	}
	var b strings.Builder
	b.WriteString(path)
	b.WriteByte('[')
	b.WriteString(strconv.Quote(name))
	b.WriteByte(']')
	return b.String()
}
