package jsonx

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ksa-go/ksa/internal/view"
)

// DefaultMaxDepth bounds the nesting of objects and arrays a Reader accepts
// when MaxDepth is zero.
const DefaultMaxDepth = 32

var (
	// ErrSyntax matches every error the Reader reports for text that is not
	// strict JSON.
	ErrSyntax = errors.New("invalid JSON")
	// ErrTooDeep matches errors for input nested deeper than the limit.
	ErrTooDeep = errors.New("JSON nested too deeply")
)

// SyntaxError reports where and why the text is not strict JSON.
type SyntaxError struct {
	Offset int
	Msg    string
	deep   bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Is matches ErrSyntax, and ErrTooDeep for depth violations.
func (e *SyntaxError) Is(target error) bool {
	return target == ErrSyntax || (e.deep && target == ErrTooDeep)
}

// Reader walks one JSON text. The zero value is not usable; make one with
// NewReader. Methods that read a value skip the whitespace before it.
type Reader struct {
	data []byte
	// src, when set, is data as a string: String returns substrings of it
	// instead of copying.
	src      string
	pos      int
	depth    int
	maxDepth int
}

// NewReader returns a Reader over data. maxDepth <= 0 means DefaultMaxDepth.
func NewReader(data []byte, maxDepth int) Reader {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return Reader{data: data, maxDepth: maxDepth}
}

// NewStringReader returns a Reader over s whose String results share s's
// memory rather than copying each value.
func NewStringReader(s string, maxDepth int) Reader {
	r := NewReader(view.Bytes(s), maxDepth) // never written
	r.src = s
	return r
}

// Offset returns the current read position.
func (r *Reader) Offset() int { return r.pos }

func (r *Reader) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: r.pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value ('{', '[', '"', 't', 'f',
// 'n', '-' or a digit), or 0 at the end of input. A NUL byte in the input,
// which is never valid there, also reads as 0.
func (r *Reader) Peek() byte {
	r.skipSpace()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

// End checks that nothing but whitespace follows.
func (r *Reader) End() error {
	r.skipSpace()
	if r.pos != len(r.data) {
		return r.errorf("data after the top-level value")
	}
	return nil
}

func (r *Reader) enter() error {
	r.depth++
	if r.depth > r.maxDepth {
		return &SyntaxError{Offset: r.pos, Msg: fmt.Sprintf("nesting deeper than %d", r.maxDepth), deep: true}
	}
	return nil
}

// Object iterates the members of an object.
type Object struct {
	r *Reader
	n int
}

// Object starts reading an object.
func (r *Reader) Object() (Object, error) {
	if r.Peek() != '{' {
		return Object{}, r.errorf("want an object")
	}
	if err := r.enter(); err != nil {
		return Object{}, err
	}
	r.pos++
	return Object{r: r}, nil
}

// Next reads the next member name and the colon after it, leaving the
// reader at the member's value, which the caller must read or Skip. It
// returns ok=false after the closing brace. The name aliases the input when
// it holds no escapes; it is only valid until the next read.
func (o *Object) Next() (name []byte, ok bool, err error) {
	r := o.r
	c := r.Peek()
	if c == '}' {
		r.pos++
		r.depth--
		return nil, false, nil
	}
	if o.n > 0 {
		if c != ',' {
			return nil, false, r.errorf("want ',' or '}' after an object member")
		}
		r.pos++
		c = r.Peek()
	}
	if c != '"' {
		return nil, false, r.errorf("want a member name")
	}
	name, err = r.stringBytes()
	if err != nil {
		return nil, false, err
	}
	if r.Peek() != ':' {
		return nil, false, r.errorf("want ':' after a member name")
	}
	r.pos++
	o.n++
	return name, true, nil
}

// Array iterates the elements of an array.
type Array struct {
	r *Reader
	n int
}

// Array starts reading an array.
func (r *Reader) Array() (Array, error) {
	if r.Peek() != '[' {
		return Array{}, r.errorf("want an array")
	}
	if err := r.enter(); err != nil {
		return Array{}, err
	}
	r.pos++
	return Array{r: r}, nil
}

// Next moves to the next element, which the caller must read or Skip, and
// returns false after the closing bracket.
func (a *Array) Next() (bool, error) {
	r := a.r
	c := r.Peek()
	if c == ']' {
		r.pos++
		r.depth--
		return false, nil
	}
	if a.n > 0 {
		if c != ',' {
			return false, r.errorf("want ',' or ']' after an array element")
		}
		r.pos++
		if r.Peek() == ']' {
			return false, r.errorf("trailing comma in array")
		}
	}
	a.n++
	return true, nil
}

// String reads a string value.
func (r *Reader) String() (string, error) {
	if r.Peek() != '"' {
		return "", r.errorf("want a string")
	}
	start := r.pos + 1
	b, err := r.stringBytes()
	if err != nil {
		return "", err
	}
	if r.src != "" && len(b) == r.pos-1-start {
		// No escapes: the value is the text between the quotes.
		return r.src[start : r.pos-1], nil
	}
	return string(b), nil
}

// StringBytes reads a string value without copying when it holds no
// escapes; the result is only valid until the next read.
func (r *Reader) StringBytes() ([]byte, error) {
	if r.Peek() != '"' {
		return nil, r.errorf("want a string")
	}
	return r.stringBytes()
}

// stringBytes reads a string starting at the opening quote.
func (r *Reader) stringBytes() ([]byte, error) {
	r.pos++ // opening quote
	start := r.pos
	for r.pos < len(r.data) {
		// Fast path: plain ASCII, no quote, backslash or control byte.
		for r.pos < len(r.data) && plainASCII[r.data[r.pos]] {
			r.pos++
		}
		if r.pos >= len(r.data) {
			break
		}
		b := r.data[r.pos]
		switch {
		case b == '"':
			s := r.data[start:r.pos]
			r.pos++
			return s, nil
		case b == '\\':
			return r.unescape(start)
		case b < 0x20:
			return nil, r.errorf("control character in string")
		case b < utf8.RuneSelf:
			r.pos++
		default:
			c, size := utf8.DecodeRune(r.data[r.pos:])
			if c == utf8.RuneError && size == 1 {
				return nil, r.errorf("invalid UTF-8 in string")
			}
			r.pos += size
		}
	}
	return nil, r.errorf("unterminated string")
}

// plainASCII marks the bytes a string may hold as they are: printable
// ASCII other than '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// unescape continues a string that holds an escape, copying it into a new
// buffer.
func (r *Reader) unescape(start int) ([]byte, error) {
	buf := make([]byte, 0, r.pos-start+16)
	buf = append(buf, r.data[start:r.pos]...)
	for r.pos < len(r.data) {
		b := r.data[r.pos]
		switch {
		case b == '"':
			r.pos++
			return buf, nil
		case b == '\\':
			if r.pos+1 >= len(r.data) {
				return nil, r.errorf("unterminated escape")
			}
			e := r.data[r.pos+1]
			r.pos += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				c, err := r.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(c) {
					if c >= 0xDC00 || r.pos+1 >= len(r.data) || r.data[r.pos] != '\\' || r.data[r.pos+1] != 'u' {
						return nil, r.errorf("lone surrogate in \\u escape")
					}
					r.pos += 2
					lo, err := r.hex4()
					if err != nil {
						return nil, err
					}
					c = utf16.DecodeRune(c, lo)
					if c == utf8.RuneError {
						return nil, r.errorf("invalid surrogate pair in \\u escape")
					}
				}
				buf = utf8.AppendRune(buf, c)
			default:
				return nil, r.errorf("invalid escape \\%c", e)
			}
		case b < 0x20:
			return nil, r.errorf("control character in string")
		case b < utf8.RuneSelf:
			buf = append(buf, b)
			r.pos++
		default:
			c, size := utf8.DecodeRune(r.data[r.pos:])
			if c == utf8.RuneError && size == 1 {
				return nil, r.errorf("invalid UTF-8 in string")
			}
			buf = append(buf, r.data[r.pos:r.pos+size]...)
			r.pos += size
		}
	}
	return nil, r.errorf("unterminated string")
}

func (r *Reader) hex4() (rune, error) {
	if r.pos+4 > len(r.data) {
		return 0, r.errorf("short \\u escape")
	}
	var c rune
	for _, h := range r.data[r.pos : r.pos+4] {
		c <<= 4
		switch {
		case '0' <= h && h <= '9':
			c |= rune(h - '0')
		case 'a' <= h && h <= 'f':
			c |= rune(h - 'a' + 10)
		case 'A' <= h && h <= 'F':
			c |= rune(h - 'A' + 10)
		default:
			return 0, r.errorf("invalid hex digit in \\u escape")
		}
	}
	r.pos += 4
	return c, nil
}

// Number reads a number and returns its text, checked against the JSON
// number grammar.
func (r *Reader) Number() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	d := r.data
	i := r.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		return nil, r.errorf("want a number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, r.errorf("want digits after the decimal point")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, r.errorf("want digits in the exponent")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	r.pos = i
	return d[start:i], nil
}

// Null consumes a null literal if one comes next and reports whether it did.
func (r *Reader) Null() bool {
	if r.Peek() == 'n' && r.literal("null") {
		return true
	}
	return false
}

// Bool reads true or false.
func (r *Reader) Bool() (bool, error) {
	switch r.Peek() {
	case 't':
		if r.literal("true") {
			return true, nil
		}
	case 'f':
		if r.literal("false") {
			return false, nil
		}
	}
	return false, r.errorf("want true or false")
}

func (r *Reader) literal(word string) bool {
	if len(r.data)-r.pos >= len(word) && string(r.data[r.pos:r.pos+len(word)]) == word {
		r.pos += len(word)
		return true
	}
	return false
}

// Skip reads and discards one value of any kind, checking its syntax and
// depth. Duplicate names inside skipped objects are not checked.
func (r *Reader) Skip() error {
	switch c := r.Peek(); {
	case c == '{':
		o, err := r.Object()
		if err != nil {
			return err
		}
		for {
			_, ok, err := o.Next()
			if err != nil || !ok {
				return err
			}
			if err := r.Skip(); err != nil {
				return err
			}
		}
	case c == '[':
		a, err := r.Array()
		if err != nil {
			return err
		}
		for {
			ok, err := a.Next()
			if err != nil || !ok {
				return err
			}
			if err := r.Skip(); err != nil {
				return err
			}
		}
	case c == '"':
		_, err := r.stringBytes()
		return err
	case c == 't' || c == 'f':
		_, err := r.Bool()
		return err
	case c == 'n':
		if r.Null() {
			return nil
		}
		return r.errorf("want null")
	case c == '-' || ('0' <= c && c <= '9'):
		_, err := r.Number()
		return err
	case c == 0 && r.pos >= len(r.data):
		return r.errorf("unexpected end of input")
	default:
		return r.errorf("unexpected character %q", c)
	}
}

// Names records member names seen in one object, to refuse duplicates:
// without allocating for the first few, and in constant time per name after
// that (a hostile object may hold thousands).
type Names struct {
	small [8]string
	n     int
	more  map[string]struct{}
}

// Add records name and reports false if it was already recorded.
func (n *Names) Add(name []byte) bool {
	if n.more != nil {
		if _, dup := n.more[string(name)]; dup {
			return false
		}
		n.more[string(name)] = struct{}{}
		return true
	}
	for _, s := range n.small[:n.n] {
		if s == string(name) {
			return false
		}
	}
	if n.n < len(n.small) {
		n.small[n.n] = string(name)
		n.n++
		return true
	}
	n.more = make(map[string]struct{}, 2*len(n.small))
	for _, s := range n.small {
		n.more[s] = struct{}{}
	}
	n.more[string(name)] = struct{}{}
	return true
}
