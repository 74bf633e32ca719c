package jsonx_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// skipAll checks a whole document the way callers that do not care about
// its content do: one value, then nothing but whitespace.
func skipAll(r *jsonx.Reader) error {
	if err := r.Skip(); err != nil {
		return err
	}
	return r.End()
}

// readers returns a byte-backed and a string-backed Reader over doc, so
// every table runs against both constructors.
func readers(doc string, maxDepth int) map[string]*jsonx.Reader {
	b := jsonx.NewReader([]byte(doc), maxDepth)
	s := jsonx.NewStringReader(doc, maxDepth)
	return map[string]*jsonx.Reader{"bytes": &b, "string": &s}
}

// requireSyntax asserts that err is a *SyntaxError matching ErrSyntax (and
// ErrTooDeep exactly when deep is set) and returns it.
func requireSyntax(t *testing.T, err error, deep bool) *jsonx.SyntaxError {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, jsonx.ErrSyntax)
	if deep {
		assert.ErrorIs(t, err, jsonx.ErrTooDeep)
	} else {
		assert.NotErrorIs(t, err, jsonx.ErrTooDeep)
	}
	var se *jsonx.SyntaxError
	require.ErrorAs(t, err, &se)
	assert.NotEmpty(t, se.Error())
	return se
}

func TestSkipAccepts(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{name: "empty object", doc: `{}`},
		{name: "empty array", doc: `[]`},
		{name: "empty string", doc: `""`},
		{name: "true", doc: `true`},
		{name: "false", doc: `false`},
		{name: "null", doc: `null`},
		{name: "zero", doc: `0`},
		{name: "negative zero", doc: `-0`},
		{name: "integer", doc: `1234567890`},
		{name: "fraction", doc: `-0.5`},
		{name: "exponent", doc: `1e10`},
		{name: "signed exponent", doc: `1.5E-10`},
		{name: "plus exponent", doc: `2e+3`},
		{name: "huge number", doc: `1e400`},
		{name: "all whitespace kinds", doc: " \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n[ 1 , 2 ] \t\r\n} \t\r\n"},
		{name: "nested", doc: `{"a":{"b":[1,{"c":null}],"d":"e"},"f":[[],{}]}`},
		{name: "duplicate names are not Skip's business", doc: `{"a":1,"a":2}`},
		{name: "all short escapes", doc: `"\" \\ \/ \b \f \n \r \t"`},
		{name: "unicode escapes", doc: `"\u0000\u00e9\u20AC\ud83d\ude00"`},
		{name: "raw multibyte", doc: `"é€😀"`},
		{name: "DEL is not a control character in JSON", doc: "\"\x7f\""},
		{name: "literal replacement character", doc: "\"\uFFFD\""},
		{name: "U+2028 raw", doc: "\"\u2028\""},
		{name: "max code point", doc: "\"\U0010FFFF\""},
		{name: "escaped max code point", doc: `"\udbff\udfff"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				require.NoError(t, skipAll(r), kind)
				assert.Equal(t, len(tt.doc), r.Offset(), kind)
			}
		})
	}
}

func TestSkipRejects(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		wantOffset int // -1: not checked
	}{
		{name: "empty input", doc: ``, wantOffset: 0},
		{name: "only whitespace", doc: " \n", wantOffset: 2},
		{name: "trailing comma in array", doc: `[1,]`, wantOffset: 3},
		{name: "trailing comma in object", doc: `{"a":1,}`, wantOffset: 7},
		{name: "leading comma in array", doc: `[,1]`, wantOffset: 1},
		{name: "leading comma in object", doc: `{,"a":1}`, wantOffset: 1},
		{name: "double comma", doc: `[1,,2]`, wantOffset: 3},
		{name: "missing comma in array", doc: `[1 2]`, wantOffset: 3},
		{name: "missing comma in object", doc: `{"a":1 "b":2}`, wantOffset: 7},
		{name: "missing colon", doc: `{"a" 1}`, wantOffset: 5},
		{name: "unquoted name", doc: `{a:1}`, wantOffset: 1},
		{name: "single-quoted string", doc: `'a'`, wantOffset: 0},
		{name: "number as name", doc: `{1:1}`, wantOffset: 1},
		{name: "missing value", doc: `{"a":}`, wantOffset: 5},
		{name: "unclosed array", doc: `[1`, wantOffset: 2},
		{name: "unclosed object", doc: `{"a":1`, wantOffset: 6},
		{name: "unclosed after comma", doc: `[1,`, wantOffset: 3},
		{name: "open brace only", doc: `{`, wantOffset: 1},
		{name: "mismatched close", doc: `[1}`, wantOffset: 2},
		{name: "close only", doc: `]`, wantOffset: 0},
		{name: "trailing data after object", doc: `{} {}`, wantOffset: 3},
		{name: "trailing data after number", doc: `1 2`, wantOffset: 2},
		{name: "trailing data after string", doc: `"a"x`, wantOffset: 3},
		{name: "trailing bracket", doc: `[]]`, wantOffset: 2},
		{name: "two literals", doc: `nullnull`, wantOffset: 4},
		{name: "NUL after value", doc: "1\x00", wantOffset: 1},
		{name: "NUL as value", doc: "[\x00]", wantOffset: 1},
		{name: "vertical tab is not whitespace", doc: "\v1", wantOffset: 0},
		{name: "form feed is not whitespace", doc: "\f1", wantOffset: 0},
		{name: "no-break space is not whitespace", doc: "\u00a01", wantOffset: 0},
		{name: "byte order mark", doc: "\ufeff{}", wantOffset: 0},
		{name: "truncated true", doc: `tru`, wantOffset: 0},
		{name: "capitalised true", doc: `True`, wantOffset: 0},
		{name: "truncated null", doc: `nul`, wantOffset: 0},
		{name: "truncated false in array", doc: `[fals]`, wantOffset: 1},
		{name: "NaN", doc: `NaN`, wantOffset: 0},
		{name: "Infinity", doc: `-Infinity`, wantOffset: 0},
		{name: "comment", doc: `[1 /* c */]`, wantOffset: 3},
		// Numbers.
		{name: "leading zero", doc: `01`, wantOffset: 1},
		{name: "negative leading zero", doc: `-01`, wantOffset: 2},
		{name: "leading zero in array", doc: `[00]`, wantOffset: 2},
		{name: "dot without fraction", doc: `1.`, wantOffset: 0},
		{name: "dot without integer", doc: `.5`, wantOffset: 0},
		{name: "exponent without digits", doc: `1e`, wantOffset: 0},
		{name: "signed exponent without digits", doc: `1e+`, wantOffset: 0},
		{name: "fraction then bare exponent", doc: `1.5E`, wantOffset: 0},
		{name: "plus sign", doc: `+1`, wantOffset: 0},
		{name: "minus only", doc: `-`, wantOffset: 0},
		{name: "minus then letter", doc: `-a`, wantOffset: 0},
		{name: "hex", doc: `0x10`, wantOffset: 1},
		{name: "dot dot", doc: `1..2`, wantOffset: 0},
		// Strings.
		{name: "unterminated string", doc: `"abc`, wantOffset: 4},
		{name: "unterminated after escaped quote", doc: `"abc\"`, wantOffset: 6},
		{name: "unterminated escape", doc: `"\`, wantOffset: 1},
		{name: "unterminated name", doc: `{"a`, wantOffset: 3},
		{name: "raw NUL in string", doc: "\"\x00\"", wantOffset: 1},
		{name: "raw tab in string", doc: "\"a\tb\"", wantOffset: 2},
		{name: "raw newline in string", doc: "\"\n\"", wantOffset: 1},
		{name: "raw 0x1f in string", doc: "\"\x1f\"", wantOffset: 1},
		{name: "control character after an escape", doc: "\"\\n\x01\"", wantOffset: 3},
		{name: "invalid UTF-8 byte", doc: "\"\xff\"", wantOffset: 1},
		{name: "invalid UTF-8 after an escape", doc: "\"\\n\xff\"", wantOffset: 3},
		{name: "truncated UTF-8 sequence", doc: "\"\xe2\x82\"", wantOffset: 1},
		{name: "overlong UTF-8", doc: "\"\xc0\xaf\"", wantOffset: 1},
		{name: "UTF-8 encoded surrogate", doc: "\"\xed\xa0\x80\"", wantOffset: 1},
		{name: "UTF-8 beyond U+10FFFF", doc: "\"\xf4\x90\x80\x80\"", wantOffset: 1},
		{name: "invalid UTF-8 in a name", doc: "{\"\xff\":1}", wantOffset: 2},
		{name: "invalid UTF-8 outside strings", doc: "[\xff]", wantOffset: 1},
		{name: "lone high surrogate", doc: `"\ud800"`, wantOffset: 7},
		{name: "lone low surrogate", doc: `"\udc00"`, wantOffset: 7},
		{name: "high surrogate then text", doc: `"\ud800abc"`, wantOffset: 7},
		{name: "high surrogate then non-surrogate escape", doc: `"\ud800\u0041"`, wantOffset: 13},
		{name: "two high surrogates", doc: `"\ud800\ud800"`, wantOffset: 13},
		{name: "reversed pair", doc: `"\udc00\ud800"`, wantOffset: 7},
		{name: "high surrogate then short escape", doc: `"\ud800\n"`, wantOffset: 7},
		{name: "high surrogate at end of input", doc: `"\ud800`, wantOffset: 7},
		{name: "high surrogate then bad low", doc: `"\ud800\uzzzz"`, wantOffset: 9},
		{name: "unknown escape", doc: `"\x41"`, wantOffset: 3},
		{name: "upper-case U escape", doc: `"\U0041"`, wantOffset: 3},
		{name: "single-quote escape", doc: `"\'"`, wantOffset: 3},
		{name: "octal-looking escape", doc: `"\0"`, wantOffset: 3},
		{name: "non-hex digit", doc: `"\u00g0"`, wantOffset: 3},
		{name: "short unicode escape", doc: `"\u12"`, wantOffset: 3},
		{name: "short unicode escape at end", doc: `"\u1`, wantOffset: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				se := requireSyntax(t, skipAll(r), false)
				if tt.wantOffset >= 0 {
					assert.Equal(t, tt.wantOffset, se.Offset, kind)
				}
			}
		})
	}
}

func TestDepth(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	tests := []struct {
		name     string
		doc      string
		maxDepth int
		wantDeep bool
	}{
		{name: "at the default limit", doc: nest("[", "]", jsonx.DefaultMaxDepth)},
		{name: "one over the default limit", doc: nest("[", "]", jsonx.DefaultMaxDepth+1), wantDeep: true},
		{name: "negative limit means default", doc: nest("[", "]", jsonx.DefaultMaxDepth), maxDepth: -1},
		{name: "negative limit over default", doc: nest("[", "]", jsonx.DefaultMaxDepth+1), maxDepth: -1, wantDeep: true},
		{name: "custom limit reached", doc: `[[1]]`, maxDepth: 2},
		{name: "custom limit exceeded", doc: `[[[1]]]`, maxDepth: 2, wantDeep: true},
		{name: "limit of one allows a flat object", doc: `{"a":1,"b":"c"}`, maxDepth: 1},
		{name: "limit of one refuses a nested object", doc: `{"a":{}}`, maxDepth: 1, wantDeep: true},
		{name: "siblings do not add up", doc: `[[1],[2],{"a":[3]},[4]]`, maxDepth: 3},
		{name: "objects count too", doc: `{"a":{"a":{"a":1}}}`, maxDepth: 2, wantDeep: true},
		{name: "mixed nesting", doc: `{"a":[{"b":[0]}]}`, maxDepth: 4},
		{name: "mixed nesting exceeded", doc: `{"a":[{"b":[[0]]}]}`, maxDepth: 4, wantDeep: true},
		{name: "unclosed array bomb", doc: strings.Repeat("[", 1_000_000), wantDeep: true},
		{name: "unclosed object bomb", doc: strings.Repeat(`{"a":`, 100_000), wantDeep: true},
		{name: "closed bomb", doc: nest("[", "]", 100_000), wantDeep: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, tt.maxDepth) {
				err := skipAll(r)
				if !tt.wantDeep {
					require.NoError(t, err, kind)
					continue
				}
				requireSyntax(t, err, true)
			}
		})
	}
}

func TestDepthNestedObjectsAccepted(t *testing.T) {
	// The objects case above must fail because of depth, not syntax.
	doc := strings.Repeat(`{"a":`, 3) + "1" + strings.Repeat("}", 3)
	r := jsonx.NewReader([]byte(doc), 3)
	require.NoError(t, skipAll(&r))
	r = jsonx.NewReader([]byte(doc), 2)
	requireSyntax(t, skipAll(&r), true)
}

func TestString(t *testing.T) {
	tests := []struct {
		name        string
		doc         string
		want        string
		wantEscapes bool // the value had escapes, so it cannot alias the input
		wantErr     bool
	}{
		{name: "empty", doc: `""`, want: ""},
		{name: "plain", doc: `"abc"`, want: "abc"},
		{name: "leading whitespace", doc: " \t\n\r\"abc\"", want: "abc"},
		{name: "multibyte", doc: `"é€😀"`, want: "é€😀"},
		{name: "DEL", doc: "\"\x7f\"", want: "\x7f"},
		{name: "quote and backslash", doc: `"a\"b\\c"`, want: `a"b\c`, wantEscapes: true},
		{name: "solidus", doc: `"a\/b"`, want: "a/b", wantEscapes: true},
		{name: "short escapes", doc: `"\b\f\n\r\t"`, want: "\b\f\n\r\t", wantEscapes: true},
		{name: "NUL escape", doc: `"\u0000"`, want: "\x00", wantEscapes: true},
		{name: "BMP escape", doc: `"caf\u00e9"`, want: "café", wantEscapes: true},
		{name: "upper-case hex", doc: `"\u20AC"`, want: "€", wantEscapes: true},
		{name: "surrogate pair", doc: `"\ud83d\ude00"`, want: "😀", wantEscapes: true},
		{name: "upper-case surrogate pair", doc: `"\uD83D\uDE00"`, want: "😀", wantEscapes: true},
		{name: "escaped replacement character", doc: `"\ufffd"`, want: "\uFFFD", wantEscapes: true},
		{name: "text around escapes", doc: `"ab\ncd\u0041ef"`, want: "ab\ncdAef", wantEscapes: true},
		{name: "multibyte after an escape", doc: `"\n€"`, want: "\n€", wantEscapes: true},
		{name: "not a string", doc: `1`, wantErr: true},
		{name: "null is not a string", doc: `null`, wantErr: true},
		{name: "end of input", doc: ``, wantErr: true},
		{name: "unterminated", doc: `"abc`, wantErr: true},
		{name: "bad escape", doc: `"\q"`, wantErr: true},
		{name: "lone surrogate", doc: `"\udfff"`, wantErr: true},
		{name: "control character", doc: "\"\x01\"", wantErr: true},
		{name: "invalid UTF-8", doc: "\"\xc3\"", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				got, err := r.String()
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, got, kind)
				require.NoError(t, r.End(), kind)
			}
			for kind, r := range readers(tt.doc, 0) {
				got, err := r.StringBytes()
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, string(got), kind)
				require.NoError(t, r.End(), kind)
			}
		})
	}
}

// within reports whether sub's bytes lie inside s's memory.
func within(sub, s string) bool {
	if len(sub) == 0 || len(s) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return p >= base && p+uintptr(len(sub)) <= base+uintptr(len(s))
}

func TestNewStringReaderSharesMemory(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		want      []string
		wantShare []bool
	}{
		{
			name:      "values without escapes are substrings",
			doc:       `["abc","é€😀","x"]`,
			want:      []string{"abc", "é€😀", "x"},
			wantShare: []bool{true, true, true},
		},
		{
			name:      "values with escapes are copies",
			doc:       `["a\nb","\u0041","\ud83d\ude00"]`,
			want:      []string{"a\nb", "A", "😀"},
			wantShare: []bool{false, false, false},
		},
		{
			name:      "mixed",
			doc:       ` [ "plain" , "esc\"aped" , "tail" ] `,
			want:      []string{"plain", `esc"aped`, "tail"},
			wantShare: []bool{true, false, true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A heap copy, so that the string is not a constant the
			// compiler could share with the expectations.
			doc := strings.Clone(tt.doc)
			r := jsonx.NewStringReader(doc, 0)
			a, err := r.Array()
			require.NoError(t, err)
			var got []string
			var shared []bool
			for {
				ok, err := a.Next()
				require.NoError(t, err)
				if !ok {
					break
				}
				s, err := r.String()
				require.NoError(t, err)
				got = append(got, s)
				shared = append(shared, within(s, doc))
			}
			require.NoError(t, r.End())
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantShare, shared)
		})
	}
}

func TestNewReaderStringCopies(t *testing.T) {
	data := []byte(`"abc"`)
	r := jsonx.NewReader(data, 0)
	s, err := r.String()
	require.NoError(t, err)
	data[1] = 'X'
	assert.Equal(t, "abc", s, "String from a byte-backed Reader must not alias the input")
}

func TestStringBytesAliasesWithoutEscapes(t *testing.T) {
	data := []byte(`"abc"`)
	r := jsonx.NewReader(data, 0)
	b, err := r.StringBytes()
	require.NoError(t, err)
	require.Equal(t, "abc", string(b))
	assert.Same(t, &data[1], &b[0])

	data = []byte(`"a\nc"`)
	r = jsonx.NewReader(data, 0)
	b, err = r.StringBytes()
	require.NoError(t, err)
	require.Equal(t, "a\nc", string(b))
	data[1] = 'X'
	assert.Equal(t, "a\nc", string(b), "an unescaped value is a new buffer")
}

func TestNumber(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    string
		wantErr bool // End fails or Number itself fails
	}{
		{name: "zero", doc: `0`, want: "0"},
		{name: "negative zero", doc: `-0`, want: "-0"},
		{name: "integer", doc: `42`, want: "42"},
		{name: "negative", doc: `-42`, want: "-42"},
		{name: "fraction", doc: `0.125`, want: "0.125"},
		{name: "exponent", doc: `6.02e23`, want: "6.02e23"},
		{name: "upper-case exponent", doc: `1E-9`, want: "1E-9"},
		{name: "exponent with plus", doc: `1e+9`, want: "1e+9"},
		{name: "exponent with leading zeros", doc: `1e007`, want: "1e007"},
		{name: "leading whitespace", doc: "\n 7", want: "7"},
		{name: "beyond int64", doc: `123456789012345678901234567890`, want: "123456789012345678901234567890"},
		{name: "leading zero", doc: `01`, wantErr: true},
		{name: "dot without fraction", doc: `1.`, wantErr: true},
		{name: "dot without integer", doc: `.5`, wantErr: true},
		{name: "bare exponent", doc: `1e`, wantErr: true},
		{name: "exponent sign only", doc: `1e-`, wantErr: true},
		{name: "plus sign", doc: `+1`, wantErr: true},
		{name: "minus only", doc: `-`, wantErr: true},
		{name: "string", doc: `"1"`, wantErr: true},
		{name: "empty", doc: ``, wantErr: true},
		{name: "trailing letter", doc: `1x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				got, err := r.Number()
				if err == nil {
					err = r.End()
				}
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, string(got), kind)
			}
		})
	}
}

func TestBool(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    bool
		wantErr bool
	}{
		{name: "true", doc: `true`, want: true},
		{name: "false", doc: `false`, want: false},
		{name: "whitespace", doc: " \ttrue\n", want: true},
		{name: "truncated true", doc: `tru`, wantErr: true},
		{name: "truncated false", doc: `f`, wantErr: true},
		{name: "capitalised", doc: `False`, wantErr: true},
		{name: "null", doc: `null`, wantErr: true},
		{name: "string", doc: `"true"`, wantErr: true},
		{name: "number", doc: `1`, wantErr: true},
		{name: "empty", doc: ``, wantErr: true},
		{name: "run-on", doc: `truex`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				got, err := r.Bool()
				if err == nil {
					err = r.End()
				}
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, got, kind)
			}
		})
	}
}

func TestNull(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		want       bool
		wantOffset int
	}{
		{name: "null", doc: `null`, want: true, wantOffset: 4},
		{name: "whitespace first", doc: `  null`, want: true, wantOffset: 6},
		{name: "truncated", doc: `nul`, want: false, wantOffset: 0},
		{name: "capitalised", doc: `Null`, want: false, wantOffset: 0},
		{name: "string", doc: `"null"`, want: false, wantOffset: 0},
		{name: "other value keeps position", doc: ` 1`, want: false, wantOffset: 1},
		{name: "empty", doc: ``, want: false, wantOffset: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				assert.Equal(t, tt.want, r.Null(), kind)
				assert.Equal(t, tt.wantOffset, r.Offset(), kind)
			}
		})
	}
}

func TestPeek(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		want       byte
		wantOffset int
	}{
		{name: "object", doc: ` {}`, want: '{', wantOffset: 1},
		{name: "array", doc: "\n[", want: '[', wantOffset: 1},
		{name: "string", doc: `"a"`, want: '"'},
		{name: "number", doc: `-1`, want: '-'},
		{name: "literal", doc: "\t\tt", want: 't', wantOffset: 2},
		{name: "end of input", doc: "  ", want: 0, wantOffset: 2},
		{name: "empty", doc: ``, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				assert.Equal(t, tt.want, r.Peek(), kind)
				assert.Equal(t, tt.wantOffset, r.Offset(), kind)
				assert.Equal(t, tt.want, r.Peek(), "Peek does not consume")
			}
		})
	}
}

// member is one name and its raw value, as TestObject collects them.
type member struct {
	Name  string
	Value string
}

func TestObject(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    []member
		wantErr bool
	}{
		{name: "empty", doc: `{}`},
		{name: "empty with whitespace", doc: "{ \n }"},
		{name: "members", doc: `{"a":"x","b":true,"c":null}`, want: []member{{"a", "x"}, {"b", "true"}, {"c", "null"}}},
		{name: "whitespace everywhere", doc: " { \"a\" : \"x\" , \"b\" : true } ", want: []member{{"a", "x"}, {"b", "true"}}},
		{name: "escaped name", doc: `{"\u0061\n":"x"}`, want: []member{{"a\n", "x"}}},
		{name: "empty name", doc: `{"":"x"}`, want: []member{{"", "x"}}},
		{name: "duplicates are reported, not refused", doc: `{"a":"x","a":"y"}`, want: []member{{"a", "x"}, {"a", "y"}}},
		{name: "not an object", doc: `[]`, wantErr: true},
		{name: "trailing comma", doc: `{"a":"x",}`, wantErr: true},
		{name: "missing colon", doc: `{"a" "x"}`, wantErr: true},
		{name: "missing comma", doc: `{"a":"x" "b":true}`, wantErr: true},
		{name: "name not a string", doc: `{true:"x"}`, wantErr: true},
		{name: "bad name", doc: `{"\z":"x"}`, wantErr: true},
		{name: "unterminated", doc: `{"a":"x"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				got, err := readMembers(r)
				if err == nil {
					err = r.End()
				}
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, got, kind)
			}
		})
	}
}

// readMembers reads an object whose values are strings, booleans or null.
func readMembers(r *jsonx.Reader) ([]member, error) {
	o, err := r.Object()
	if err != nil {
		return nil, err
	}
	var got []member
	for {
		name, ok, err := o.Next()
		if err != nil || !ok {
			return got, err
		}
		m := member{Name: string(name)}
		switch r.Peek() {
		case '"':
			m.Value, err = r.String()
		case 't', 'f':
			var b bool
			b, err = r.Bool()
			m.Value = map[bool]string{true: "true", false: "false"}[b]
		default:
			if !r.Null() {
				return nil, errors.New("unexpected value in test document")
			}
			m.Value = "null"
		}
		if err != nil {
			return nil, err
		}
		got = append(got, m)
	}
}

func TestArray(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    []string
		wantErr bool
	}{
		{name: "empty", doc: `[]`},
		{name: "empty with whitespace", doc: "[ \r\n ]"},
		{name: "one", doc: `[1]`, want: []string{"1"}},
		{name: "several", doc: ` [ 1 , -2.5e3 ,0 ] `, want: []string{"1", "-2.5e3", "0"}},
		{name: "not an array", doc: `{}`, wantErr: true},
		{name: "trailing comma", doc: `[1,]`, wantErr: true},
		{name: "trailing comma with whitespace", doc: `[1 , ]`, wantErr: true},
		{name: "leading comma", doc: `[,1]`, wantErr: true},
		{name: "missing comma", doc: `[1 2]`, wantErr: true},
		{name: "bad element", doc: `[01]`, wantErr: true},
		{name: "unterminated", doc: `[1`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for kind, r := range readers(tt.doc, 0) {
				got, err := readNumbers(r)
				if err == nil {
					err = r.End()
				}
				if tt.wantErr {
					requireSyntax(t, err, false)
					continue
				}
				require.NoError(t, err, kind)
				assert.Equal(t, tt.want, got, kind)
			}
		})
	}
}

func readNumbers(r *jsonx.Reader) ([]string, error) {
	a, err := r.Array()
	if err != nil {
		return nil, err
	}
	var got []string
	for {
		ok, err := a.Next()
		if err != nil || !ok {
			return got, err
		}
		n, err := r.Number()
		if err != nil {
			return nil, err
		}
		got = append(got, string(n))
	}
}

func TestObjectSkipsUnreadValues(t *testing.T) {
	// A caller reads the members it knows and Skips the rest.
	doc := `{"skip":{"x":[1,{"y":"z"}]},"keep":"v","also":[true,null]}`
	for kind, r := range readers(doc, 0) {
		o, err := r.Object()
		require.NoError(t, err, kind)
		var keep string
		for {
			name, ok, err := o.Next()
			require.NoError(t, err, kind)
			if !ok {
				break
			}
			if string(name) == "keep" {
				keep, err = r.String()
			} else {
				err = r.Skip()
			}
			require.NoError(t, err, kind)
		}
		require.NoError(t, r.End(), kind)
		assert.Equal(t, "v", keep, kind)
	}
}

func TestSyntaxErrorIs(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		target   error
		wantIsIt bool
	}{
		{name: "syntax matches ErrSyntax", err: &jsonx.SyntaxError{Msg: "x"}, target: jsonx.ErrSyntax, wantIsIt: true},
		{name: "syntax does not match ErrTooDeep", err: &jsonx.SyntaxError{Msg: "x"}, target: jsonx.ErrTooDeep, wantIsIt: false},
		{name: "unrelated target", err: &jsonx.SyntaxError{Msg: "x"}, target: errors.New("other"), wantIsIt: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantIsIt, errors.Is(tt.err, tt.target))
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name  string
		adds  []string
		wants []bool
	}{
		{name: "empty", adds: nil, wants: nil},
		{name: "distinct", adds: []string{"a", "b", "c"}, wants: []bool{true, true, true}},
		{name: "immediate duplicate", adds: []string{"a", "a"}, wants: []bool{true, false}},
		{name: "empty name", adds: []string{"", "a", ""}, wants: []bool{true, true, false}},
		{name: "case differs", adds: []string{"aud", "Aud", "AUD"}, wants: []bool{true, true, true}},
		{
			name:  "beyond the inline slots",
			adds:  []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "0", "7", "8", "10", "11"},
			wants: []bool{true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n jsonx.Names
			var got []bool
			for _, s := range tt.adds {
				got = append(got, n.Add([]byte(s)))
			}
			assert.Equal(t, tt.wants, got)
		})
	}
}

func TestNamesCopiesName(t *testing.T) {
	// Names from Object.Next alias the input buffer; Add must keep its own
	// copy.
	var n jsonx.Names
	buf := []byte("abc")
	require.True(t, n.Add(buf))
	copy(buf, "xyz")
	assert.False(t, n.Add([]byte("abc")))
	assert.True(t, n.Add(buf))
}

func TestNamesRefusesDuplicateMembers(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantDupe string
	}{
		{name: "no duplicates", doc: `{"a":1,"b":2}`},
		{name: "plain duplicate", doc: `{"a":1,"b":2,"a":3}`, wantDupe: "a"},
		{name: "duplicate through an escape", doc: `{"a":1,"\u0061":2}`, wantDupe: "a"},
		{name: "nested objects have their own names", doc: `{"a":{"a":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := jsonx.NewReader([]byte(tt.doc), 0)
			o, err := r.Object()
			require.NoError(t, err)
			var names jsonx.Names
			dupe := ""
			for {
				name, ok, err := o.Next()
				require.NoError(t, err)
				if !ok {
					break
				}
				if !names.Add(name) && dupe == "" {
					dupe = string(name)
				}
				require.NoError(t, r.Skip())
			}
			require.NoError(t, r.End())
			assert.Equal(t, tt.wantDupe, dupe)
		})
	}
}

// TestNamesManyMembers: duplicates are found past the inline slots too.
func TestNamesManyMembers(t *testing.T) {
	var n jsonx.Names
	for i := 0; i < 100; i++ {
		require.True(t, n.Add([]byte(fmt.Sprintf("m%d", i))))
	}
	for _, i := range []int{0, 7, 8, 50, 99} {
		assert.False(t, n.Add([]byte(fmt.Sprintf("m%d", i))), "m%d", i)
	}
}
