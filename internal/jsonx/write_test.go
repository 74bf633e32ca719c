package jsonx_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// TestAppendStringMatchesGoJose pins AppendString to the output of go-jose
// v2's JSON encoder (gopkg.in/go-jose/go-jose.v2/json, encodeState.string),
// the encoder kube-apiserver signs tokens with. The expectations were
// worked out from that function and checked against go-jose v2.6.3.
func TestAppendStringMatchesGoJose(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "empty", in: "", want: `""`},
		{name: "plain ASCII", in: "system:serviceaccount:default:builder", want: `"system:serviceaccount:default:builder"`},
		{name: "quote", in: `"`, want: `"\""`},
		{name: "backslash", in: `\`, want: `"\\"`},
		{name: "solidus is not escaped", in: "https://a/b", want: `"https://a/b"`},
		{name: "apostrophe is not escaped", in: "it's", want: `"it's"`},
		{name: "newline", in: "\n", want: `"\n"`},
		{name: "carriage return", in: "\r", want: `"\r"`},
		{name: "tab", in: "\t", want: `"\t"`},
		{name: "backspace has no short escape", in: "\b", want: `"\u0008"`},
		{name: "form feed has no short escape", in: "\f", want: `"\u000c"`},
		{name: "NUL", in: "\x00", want: `"\u0000"`},
		{name: "other control bytes", in: "\x01\x0b\x1b\x1f", want: `"\u0001\u000b\u001b\u001f"`},
		{name: "space is the first unescaped byte", in: " ", want: `" "`},
		{name: "DEL is not escaped", in: "\x7f", want: "\"\x7f\""},
		{name: "less than", in: "<", want: `"\u003c"`},
		{name: "greater than", in: ">", want: `"\u003e"`},
		{name: "ampersand", in: "&", want: `"\u0026"`},
		{name: "HTML", in: "<a href='x'>&amp;</a>", want: `"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"`},
		{name: "line separator", in: "\u2028", want: `"\u2028"`},
		{name: "paragraph separator", in: "\u2029", want: `"\u2029"`},
		{name: "neighbours of the separators stay raw", in: "\u2027\u202a", want: "\"\u2027\u202a\""},
		{name: "separators inside text", in: "a\u2028b\u2029c", want: `"a\u2028b\u2029c"`},
		{name: "multibyte stays raw", in: "café € 😀", want: "\"café € 😀\""},
		{name: "U+FFFD itself stays raw", in: "\uFFFD", want: "\"\uFFFD\""},
		{name: "max code point stays raw", in: "\U0010FFFF", want: "\"\U0010FFFF\""},
		{name: "invalid byte", in: "\xff", want: `"\ufffd"`},
		{name: "invalid byte inside text", in: "a\xffb", want: `"a\ufffdb"`},
		{name: "truncated sequence: one replacement per byte", in: "\xe2\x82", want: `"\ufffd\ufffd"`},
		{name: "truncated sequence before text", in: "\xe2\x82z", want: `"\ufffd\ufffdz"`},
		{name: "UTF-8 encoded surrogate", in: "\xed\xa0\x80", want: `"\ufffd\ufffd\ufffd"`},
		{name: "overlong encoding", in: "\xc0\xaf", want: `"\ufffd\ufffd"`},
		{name: "beyond U+10FFFF", in: "\xf4\x90\x80\x80", want: `"\ufffd\ufffd\ufffd\ufffd"`},
		{name: "lone continuation byte", in: "\x80", want: `"\ufffd"`},
		{name: "everything at once", in: "<\"\\\n\b\xff\u2028>", want: `"\u003c\"\\\n\u0008\ufffd\u2028\u003e"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(jsonx.AppendString(nil, tt.in)))
			assert.Equal(t, "x:"+tt.want, string(jsonx.AppendString([]byte("x:"), tt.in)), "appends to dst")
		})
	}
}

// TestAppendStringVersusEncodingJSON documents where go-jose v2 (and so
// AppendString) and Go's encoding/json write different bytes for the same
// string. Both outputs decode to the same value; the bytes matter because
// they are signed. Everything not listed here is byte-identical (see
// FuzzAppendString).
func TestAppendStringVersusEncodingJSON(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantJose   string
		wantStdlib string
		// wantStdlibV2, when set, is encoding/json's output when built
		// with GOEXPERIMENT=jsonv2.
		wantStdlibV2 string
	}{
		{name: "backspace", in: "\b", wantJose: `"\u0008"`, wantStdlib: `"\b"`},
		{name: "form feed", in: "\f", wantJose: `"\u000c"`, wantStdlib: `"\f"`},
		{name: "both in text", in: "a\bb\fc", wantJose: `"a\u0008b\u000cc"`, wantStdlib: `"a\bb\fc"`},
		// The rules they share, for contrast.
		{name: "same: newline", in: "\n", wantJose: `"\n"`, wantStdlib: `"\n"`},
		{name: "same: other control bytes", in: "\x00\x1f", wantJose: `"\u0000\u001f"`, wantStdlib: `"\u0000\u001f"`},
		{name: "same: HTML characters", in: "<>&", wantJose: `"\u003c\u003e\u0026"`, wantStdlib: `"\u003c\u003e\u0026"`},
		{name: "same: separators", in: "\u2028\u2029", wantJose: `"\u2028\u2029"`, wantStdlib: `"\u2028\u2029"`},
		{
			// Both replace each invalid byte; the json/v2 engine writes the
			// replacement character raw instead of escaped.
			name: "invalid UTF-8", in: "\xe2\x82",
			wantJose: `"\ufffd\ufffd"`, wantStdlib: `"\ufffd\ufffd"`, wantStdlibV2: "\"\uFFFD\uFFFD\"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantJose, string(jsonx.AppendString(nil, tt.in)))
			wantStdlib := tt.wantStdlib
			if stdlibJSONv2 && tt.wantStdlibV2 != "" {
				wantStdlib = tt.wantStdlibV2
			}
			assert.Equal(t, wantStdlib, string(stdlibEncode(t, tt.in)))
		})
	}
}

func TestAppendInt(t *testing.T) {
	tests := []struct {
		name string
		in   int64
		want string
	}{
		{name: "zero", in: 0, want: "0"},
		{name: "positive", in: 1700000000, want: "1700000000"},
		{name: "negative", in: -1, want: "-1"},
		{name: "max", in: math.MaxInt64, want: "9223372036854775807"},
		{name: "min", in: math.MinInt64, want: "-9223372036854775808"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(jsonx.AppendInt(nil, tt.in)))
			assert.Equal(t, `"exp":`+tt.want, string(jsonx.AppendInt([]byte(`"exp":`), tt.in)))
		})
	}
}

func TestAppendStrings(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{name: "nil", in: nil, want: `[]`},
		{name: "empty", in: []string{}, want: `[]`},
		{name: "one", in: []string{"api"}, want: `["api"]`},
		{name: "several", in: []string{"api", "", "vault"}, want: `["api","","vault"]`},
		{name: "escaped elements", in: []string{"<a>", "\b"}, want: `["\u003ca\u003e","\u0008"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(jsonx.AppendStrings(nil, tt.in)))
			assert.Equal(t, `"aud":`+tt.want, string(jsonx.AppendStrings([]byte(`"aud":`), tt.in)))
		})
	}
}

func TestAppendKey(t *testing.T) {
	tests := []struct {
		name string
		dst  string
		key  string
		want string
	}{
		{name: "first member", dst: "{", key: "iss", want: `{"iss":`},
		{name: "later member", dst: `{"a":1,`, key: "kubernetes.io", want: `{"a":1,"kubernetes.io":`},
		{name: "nil dst", dst: "", key: "sub", want: `"sub":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dst []byte
			if tt.dst != "" {
				dst = []byte(tt.dst)
			}
			assert.Equal(t, tt.want, string(jsonx.AppendKey(dst, tt.key)))
		})
	}
}

// TestWrittenDocumentReadsBack builds a small document with the writer and
// reads it back with the Reader.
func TestWrittenDocumentReadsBack(t *testing.T) {
	b := []byte{'{'}
	b = jsonx.AppendKey(b, "sub")
	b = jsonx.AppendString(b, "system:serviceaccount:ns:<sa>\u2028")
	b = append(b, ',')
	b = jsonx.AppendKey(b, "aud")
	b = jsonx.AppendStrings(b, []string{"a", "\b"})
	b = append(b, ',')
	b = jsonx.AppendKey(b, "exp")
	b = jsonx.AppendInt(b, -5)
	b = append(b, '}')

	r := jsonx.NewReader(b, 0)
	got, err := build(&r)
	require.NoError(t, err)
	require.NoError(t, r.End())
	assert.Equal(t, map[string]any{
		"sub": "system:serviceaccount:ns:<sa>\u2028",
		"aud": []any{"a", "\b"},
		"exp": json.Number("-5"),
	}, got)
}
